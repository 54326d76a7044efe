/**
 * What OPA's formatter checks before it writes a module as Rego v1 (`format.SourceWithOpts`:
 * `ast.CheckRegoV1WithOptions` without the `if`/`contains`/body requirements, which the writer
 * itself fulfils): no duplicate imports, no rule, function argument or variable named `input` or
 * `data`, no deprecated builtin, no rule named with a Rego v1 keyword. A Rego v0 module that
 * fails one of them cannot become v1 by formatting (`--v0-v1`); the errors say what to rename.
 */
import { lookupBuiltin } from "../builtins/catalog.ts";
import { type Location, RegoError } from "../errors.ts";
import type { Module } from "../syntax/ast.ts";
import { pathParts } from "./imports.ts";
import type { FExpr, FModule, FTerm, Loc } from "./tree.ts";

/** The keywords of Rego v1 a Rego v0 rule may be named with. */
const V1_ONLY_KEYWORDS: ReadonlySet<string> = new Set(["if", "contains", "in", "every"]);
const ROOT_DOCUMENTS: ReadonlySet<string> = new Set(["input", "data"]);

/** OPA's `CheckRegoV1` errors of a module, in OPA's order. */
export function checkRegoV1(module: Module, tree: FModule, file: string): RegoError[] {
  const at = (loc: Loc): Location => ({ file, line: loc.row, col: loc.col, offset: loc.offset });
  const errors: RegoError[] = [];

  const seen = new Map<string, string>();
  for (const imp of tree.imports) {
    const parts = pathParts(imp.path);
    const name = imp.alias ?? parts[parts.length - 1] ?? "";
    const text = `import ${parts.join(".")}${imp.alias === undefined ? "" : ` as ${imp.alias}`}`;
    const earlier = seen.get(name);
    if (earlier !== undefined) {
      errors.push(new RegoError("rego_compile_error", `import must not shadow ${earlier}`, at(imp.loc)));
    } else {
      seen.set(name, text);
    }
  }

  for (const rule of tree.rules) {
    const first = rule.head.ref[0]?.value;
    if (first?.kind === "var" && ROOT_DOCUMENTS.has(first.name)) {
      const detail = `rules must not shadow ${first.name} (use a different rule name)`;
      errors.push(new RegoError("rego_compile_error", detail, at(rule.loc)));
    }
    for (const arg of rule.head.args) {
      if (arg.value.kind === "var" && ROOT_DOCUMENTS.has(arg.value.name)) {
        const detail = `args must not shadow ${arg.value.name} (use a different variable name)`;
        errors.push(new RegoError("rego_compile_error", detail, at(arg.loc)));
      }
    }
  }
  walkExprs(tree, (expr) => {
    const node = expr.node;
    if (node.kind !== "call" || termName(node.terms[0]) !== "assign") return;
    const target = node.terms[1]?.value;
    if (target?.kind === "var" && ROOT_DOCUMENTS.has(target.name)) {
      const detail = `variables must not shadow ${target.name} (use a different variable name)`;
      errors.push(new RegoError("rego_compile_error", detail, at(expr.loc)));
    }
  });

  walkCalls(tree, (operator, loc) => {
    const name = termName(operator);
    if (name !== undefined && lookupBuiltin(name)?.declaration.deprecated === true) {
      const detail = `deprecated built-in function calls in expression: ${name}`;
      errors.push(new RegoError("rego_type_error", detail, at(loc)));
    }
  });

  for (const rule of module.rules) {
    const ref = rule.head.ref;
    const name = ref.type === "var" ? ref.name : undefined;
    if (name !== undefined && V1_ONLY_KEYWORDS.has(name)) {
      const detail = `${name} keyword cannot be used for rule name`;
      errors.push(new RegoError("rego_parse_error", detail, rule.loc));
    }
  }
  return errors;
}

/** An operator's name as OPA prints it: `count`, `net.cidr_overlap`. */
function termName(term: FTerm | undefined): string | undefined {
  if (term === undefined) return undefined;
  if (term.value.kind === "var") return term.value.name;
  if (term.value.kind !== "ref") return undefined;
  const parts = pathParts(term);
  return parts.every((part) => part !== "") ? parts.join(".") : undefined;
}

/** Every expression of the module, comprehension and `every` bodies included. */
function walkExprs(tree: FModule, visit: (expr: FExpr) => void): void {
  walk(tree, { expr: visit });
}

/** Every call: its operator and where OPA reports it (the expression, or the operator term). */
function walkCalls(tree: FModule, visit: (operator: FTerm, loc: Loc) => void): void {
  walk(tree, {
    expr: (expr) => {
      if (expr.node.kind === "call" && expr.node.terms[0]) visit(expr.node.terms[0], expr.loc);
    },
    term: (term) => {
      if (term.value.kind === "call" && term.value.terms[0])
        visit(term.value.terms[0], term.value.terms[0].loc);
    },
  });
}

interface Visitor {
  expr?: (expr: FExpr) => void;
  term?: (term: FTerm) => void;
}

function walk(tree: FModule, visitor: Visitor): void {
  const terms = (list: readonly FTerm[]): void => {
    for (const t of list) term(t);
  };
  const body = (list: readonly FExpr[]): void => {
    for (const e of list) expr(e);
  };
  function term(t: FTerm): void {
    visitor.term?.(t);
    const v = t.value;
    switch (v.kind) {
      case "ref":
      case "call":
        terms(v.terms);
        break;
      case "array":
      case "set":
        terms(v.items);
        break;
      case "object":
        for (const [key, value] of v.entries) terms([key, value]);
        break;
      case "arraycompr":
      case "setcompr":
        term(v.term);
        body(v.body);
        break;
      case "objectcompr":
        terms([v.key, v.value]);
        body(v.body);
        break;
      case "template":
        for (const part of v.parts) {
          if ("node" in part) expr(part);
          else term(part);
        }
        break;
      default:
        break;
    }
  }
  function expr(e: FExpr): void {
    visitor.expr?.(e);
    const node = e.node;
    switch (node.kind) {
      case "term":
        term(node.term);
        break;
      case "call":
        terms(node.terms.slice(1));
        break;
      case "some":
        terms(node.symbols);
        break;
      case "every":
        terms(node.key ? [node.key, node.value, node.domain] : [node.value, node.domain]);
        body(node.body);
        break;
      case "not":
        body(node.body);
        break;
      case "logical":
        body(node.lhs);
        body(node.rhs);
        break;
    }
    for (const w of e.with) terms([w.target, w.value]);
  }
  for (const rule of tree.rules) {
    for (let r: typeof rule | undefined = rule; r !== undefined; r = r.else) {
      terms([...r.head.ref, ...r.head.args]);
      if (r.head.key) term(r.head.key);
      if (r.head.value) term(r.head.value);
      body(r.body);
    }
  }
}
