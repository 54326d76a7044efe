/**
 * What `opa check` reports beyond what a module needs to run: the checks OPA's compiler makes of
 * every Rego v1 module (duplicate imports, deprecated builtins, declared vars never used) and,
 * in strict mode (`--strict`), the unused function arguments, local assignments and imports
 * (`v1/ast/compile.go`: `checkDuplicateImports`, `checkDeprecatedBuiltins`,
 * `checkUnusedDeclaredVars`, `checkUnusedAssignedVars`, unused arguments in `rewriteLocalVars`,
 * unused imports in `resolveAllRefs`).
 *
 * The lowerer tells a `VarUsage` each declaration and each use of a declared var (by its unique
 * renamed name), each import it resolves a name through and each builtin it calls.
 */
import { lookupBuiltin } from "../builtins/catalog.ts";
import { type Location, RegoError } from "../errors.ts";
import type * as ast from "../syntax/ast.ts";
import { printTerm } from "../syntax/printer.ts";

/** Which checks `compile` makes: OPA's for every v1 module, or strict mode's as well. */
export type CompileChecks = "opa" | "strict";

/**
 * How a var was declared, which says when it counts as unused (the declaration itself is one
 * use where the lowerer reads the var back):
 * - `assigned` (`x := …`): used nowhere else (strict mode);
 * - `declared` (`some x`): used nowhere at all;
 * - `every` (`every k, v in …`): used nowhere in the body;
 * - `argument` (`f(x)`): used nowhere else in any of the function's bodies (strict mode);
 * - `iterated` (`some x in xs`): never reported, the iteration uses it.
 */
export type DeclarationKind = "assigned" | "declared" | "every" | "argument" | "iterated";

interface Declaration {
  name: string;
  renamed: string;
  kind: DeclarationKind;
  /** The expression that declares it (OPA reports the expression). */
  loc: Location;
}

/** Uses a declaration makes of its own var when the lowerer reads it back. */
const OWN_USES: Record<DeclarationKind, number> = {
  assigned: 1,
  declared: 0,
  every: 1,
  argument: 1,
  iterated: Number.POSITIVE_INFINITY,
};

export class VarUsage {
  private readonly uses = new Map<string, number>();
  private declarations: Declaration[] = [];
  private readonly importsUsed = new Set<string>();
  private readonly reported: RegoError[] = [];

  declare(name: string, renamed: string, kind: DeclarationKind, loc: Location): void {
    this.declarations.push({ name, renamed, kind, loc });
  }

  use(renamed: string): void {
    this.uses.set(renamed, (this.uses.get(renamed) ?? 0) + 1);
  }

  useImport(alias: string): void {
    this.importsUsed.add(alias);
  }

  callBuiltin(name: string, loc: Location): void {
    if (lookupBuiltin(name)?.declaration.deprecated)
      this.report(
        new RegoError("rego_type_error", `deprecated built-in function calls in expression: ${name}`, loc),
      );
  }

  /** An error OPA's compiler raises that a build of Writ's lets pass (a policy that runs). */
  report(error: RegoError): void {
    this.reported.push(error);
  }

  /**
   * The errors about the vars of the rule lowered since the last call (its arguments, else
   * branches and closures included); `head` is where OPA reports an unused argument.
   */
  ruleErrors(checks: CompileChecks, head: Location): RegoError[] {
    const errors: RegoError[] = [...this.reported];
    this.reported.length = 0;
    const strict = checks === "strict";
    for (const d of this.declarations) {
      if ((this.uses.get(d.renamed) ?? 0) > OWN_USES[d.kind]) continue;
      if (d.kind === "declared" || d.kind === "every") {
        errors.push(new RegoError("rego_compile_error", `declared var ${d.name} unused`, d.loc));
      } else if (d.kind === "assigned" && strict) {
        errors.push(new RegoError("rego_compile_error", `assigned var ${d.name} unused`, d.loc));
      } else if (d.kind === "argument" && strict) {
        errors.push(
          new RegoError(
            "rego_compile_error",
            `unused argument ${d.name}. (hint: use _ (wildcard variable) instead)`,
            head,
          ),
        );
      }
    }
    this.declarations = [];
    return errors;
  }

  /**
   * The errors about a module's statements: rules named after a root document, shadowed imports,
   * and (strict mode) unused imports.
   */
  moduleErrors(module: ast.Module, checks: CompileChecks): RegoError[] {
    const errors: RegoError[] = [];
    for (const rule of module.rules) {
      const name = rule.head.ref.type === "var" ? rule.head.ref.name : undefined;
      const first =
        rule.head.ref.type === "ref" && rule.head.ref.head.type === "var" ? rule.head.ref.head.name : name;
      if (first === "input" || first === "data") {
        errors.push(
          new RegoError(
            "rego_compile_error",
            `rules must not shadow ${first} (use a different rule name)`,
            rule.loc,
          ),
        );
      }
    }
    const seen = new Map<string, ast.Import>();
    for (const imp of module.imports) {
      const name = importName(imp);
      const earlier = seen.get(name);
      if (earlier) {
        errors.push(
          new RegoError("rego_compile_error", `import must not shadow ${importText(earlier)}`, imp.loc),
        );
      } else {
        seen.set(name, imp);
      }
      const root =
        imp.path.type === "var" ? imp.path.name : imp.path.head.type === "var" ? imp.path.head.name : "";
      if (checks === "strict" && (root === "data" || root === "input") && !this.importsUsed.has(name)) {
        errors.push(new RegoError("rego_compile_error", `${importText(imp)} unused`, imp.loc));
      }
    }
    return errors;
  }
}

/** The name an import binds: its alias, or the last part of its path (OPA's `Import.Name`). */
function importName(imp: ast.Import): string {
  if (imp.alias !== undefined) return imp.alias;
  const path = imp.path;
  if (path.type === "var") return path.name;
  const last = path.path[path.path.length - 1];
  return last?.type === "string" ? last.value : printTerm(path);
}

/** `import data.a.b as c`, as OPA prints an import in its messages. */
function importText(imp: ast.Import): string {
  return `import ${printTerm(imp.path)}${imp.alias === undefined ? "" : ` as ${imp.alias}`}`;
}
