/**
 * Lowering: AST rules and queries to the kernel language (see `kernel.ts`), before ordering.
 *
 * Resolves names (locals declared with `:=`, `some`, `every` and function arguments; imports;
 * rules of the package; the roots `input` and `data`), renames declared locals and wildcards so
 * that shadowing is explicit, lifts nested calls into temporaries, turns `some … in …` into
 * unification with iteration, and wraps `not` and `with` around the expressions they govern.
 */

import { lookupBuiltin, PRINT } from "../builtins/catalog.ts";
import { admits, type LiteralKind, typeString } from "../builtins/typecheck.ts";
import { type Location, RegoError } from "../errors.ts";
import type * as ast from "../syntax/ast.ts";
import type { KBody, KCallee, KExpr, KTerm, KVar, KWith } from "./kernel.ts";
import { type DeclarationKind, VarUsage } from "./usage.ts";

/** What a module's names refer to. */
export interface ModuleEnv {
  file: string;
  packagePath: string[];
  /** First names of the package's rules (`p` for `p.q.r := 1`). */
  ruleNames: ReadonlySet<string>;
  /** Import alias → full ref path (starting with `data` or `input`). */
  imports: ReadonlyMap<string, string[]>;
  /** Full paths of every function defined anywhere, joined with "/". */
  functions: ReadonlySet<string>;
  /**
   * OPA's improved negation (`import future.keywords.not`, or `rego.v2`): `not f(g(input.x))`
   * negates its whole expansion, instead of evaluating the nested call and the ref before it.
   */
  improvedNegation: boolean;
}

/** Generates names no Rego source can contain (`$` is not an identifier character). */
export class NameSource {
  private next = 0;
  /** Temporaries standing for calls that were reported as errors (unknown function, arity). */
  readonly failed = new Set<string>();
  temp(): string {
    return `$t${++this.next}`;
  }
  wildcard(): string {
    return `$w${++this.next}`;
  }
  rename(original: string): string {
    return `${original}$${++this.next}`;
  }
}

const METADATA_BUILTINS = new Set(["rego.metadata.rule", "rego.metadata.chain"]);

/** JSON data as a constant term. */
function jsonTerm(x: ast.JSONValue, loc: Location): ast.Term {
  if (x === null) return { type: "null", loc };
  if (typeof x === "boolean") return { type: "boolean", value: x, loc };
  if (typeof x === "number") return { type: "number", value: String(x), loc };
  if (typeof x === "string") return { type: "string", value: x, loc };
  if (Array.isArray(x)) return { type: "array", items: x.map((i) => jsonTerm(i, loc)), loc };
  return {
    type: "object",
    entries: Object.entries(x).map(([k, v]) => [{ type: "string", value: k, loc }, jsonTerm(v, loc)]),
    loc,
  };
}

/** The name a var had in the source, for error messages. */
export function sourceName(name: string): string {
  if (name.startsWith("$w")) return "_";
  const dollar = name.indexOf("$");
  return dollar > 0 ? name.slice(0, dollar) : name;
}

export function isGenerated(name: string): boolean {
  return name.startsWith("$");
}

class Scope {
  private readonly frames: Array<Map<string, string>> = [new Map()];

  push(): void {
    this.frames.push(new Map());
  }
  pop(): void {
    this.frames.pop();
  }
  lookup(name: string): string | undefined {
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const found = this.frames[i]!.get(name);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  declaredHere(name: string): boolean {
    return this.frames[this.frames.length - 1]!.has(name);
  }
  /** Whether a function argument is declared `name`, and `name` is being declared in its body's own frame. */
  redeclaresArgument(name: string): boolean {
    return this.frames.length === 2 && this.frames[0]!.has(name);
  }
  declare(name: string, renamed: string): void {
    this.frames[this.frames.length - 1]!.set(name, renamed);
  }
}

const ROOTS = new Set(["input", "data"]);

export class Lowerer {
  readonly errors: RegoError[] = [];
  /** Declarations and uses, for the checks `opa check` makes (`usage.ts`). */
  readonly usage = new VarUsage();
  private scope = new Scope();
  /** The expression being lowered: where OPA reports a var it declares. */
  private exprLoc: Location | undefined;

  constructor(
    private readonly env: ModuleEnv,
    readonly names: NameSource,
  ) {}

  /** Starts a fresh scope (one per rule or query). */
  reset(): void {
    this.scope = new Scope();
  }

  pushScope(): void {
    this.scope.push();
  }
  popScope(): void {
    this.scope.pop();
  }

  private error(
    detail: string,
    loc: Location,
    code: "rego_compile_error" | "rego_type_error" = "rego_compile_error",
  ) {
    this.errors.push(new RegoError(code, detail, loc));
  }

  // ------------------------------------------------------------------ declarations

  /**
   * Declares every var of a pattern (`x`, `[a, b]`, `{"k": v}`) in the current frame. A
   * function's arguments may name a var more than once; the later ones refer to the first.
   */
  declarePattern(
    term: ast.Term,
    how: "assigned" | "declared" | "argument",
    kind: DeclarationKind = how,
  ): void {
    switch (term.type) {
      case "var": {
        if (term.name === "_") return;
        if (how === "argument" && this.scope.declaredHere(term.name)) return;
        if (this.scope.declaredHere(term.name)) {
          this.error(`var ${term.name} ${how === "assigned" ? "assigned" : "declared"} above`, term.loc);
          return;
        }
        if (ROOTS.has(term.name)) {
          const what = how === "argument" ? "args" : "variables";
          this.error(`${what} must not shadow ${term.name} (use a different variable name)`, term.loc);
          return;
        }
        // OPA's rewriteDeclaredVar: a function's body cannot declare one of its arguments again
        // (its closures may). Reported by `opa check`; the body's own var shadows it here.
        if (how !== "argument" && this.scope.redeclaresArgument(term.name)) {
          this.usage.report(
            new RegoError(
              "rego_compile_error",
              `arg ${term.name} redeclared`,
              how === "assigned" ? term.loc : (this.exprLoc ?? term.loc),
            ),
          );
        }
        const renamed = this.names.rename(term.name);
        this.scope.declare(term.name, renamed);
        this.usage.declare(term.name, renamed, kind, this.exprLoc ?? term.loc);
        return;
      }
      case "array":
        for (const item of term.items) this.declarePattern(item, how, kind);
        return;
      case "object":
        for (const [, value] of term.entries) this.declarePattern(value, how, kind);
        return;
      case "ref":
        if (how === "assigned") this.error("cannot assign to ref", term.loc);
        return;
      default:
        if (how === "assigned" && (term.type === "call" || term.type.endsWith("compr"))) {
          this.error(`cannot assign to ${term.type === "call" ? "call" : "comprehension"}`, term.loc);
        }
    }
  }

  // ------------------------------------------------------------------ terms

  private resolveVar(v: ast.VarTerm): KTerm {
    if (v.name === "_") return { type: "var", name: this.names.wildcard(), loc: v.loc };
    const local = this.scope.lookup(v.name);
    if (local !== undefined) {
      this.usage.use(local);
      return { type: "var", name: local, loc: v.loc };
    }
    if (ROOTS.has(v.name)) {
      this.usage.useImport(v.name);
      return { type: "var", name: v.name, loc: v.loc };
    }
    const imported = this.env.imports.get(v.name);
    if (imported) {
      this.usage.useImport(v.name);
      return pathRef(imported, v.loc);
    }
    if (this.env.ruleNames.has(v.name)) return pathRef(["data", ...this.env.packagePath, v.name], v.loc);
    return { type: "var", name: v.name, loc: v.loc };
  }

  /** Lowers a term; calls inside it are appended to `prelude` as temporaries. */
  term(t: ast.Term, prelude: KBody): KTerm {
    switch (t.type) {
      case "null":
      case "boolean":
      case "number":
      case "string":
        return t;
      case "var":
        return this.resolveVar(t);
      case "ref": {
        const head = this.term(t.head, prelude);
        const path = t.path.map((p) => this.term(p, prelude));
        if (head.type === "ref")
          return { type: "ref", head: head.head, path: [...head.path, ...path], loc: t.loc };
        return { type: "ref", head, path, loc: t.loc };
      }
      case "array":
        return { type: "array", items: t.items.map((i) => this.term(i, prelude)), loc: t.loc };
      case "set":
        return { type: "set", items: t.items.map((i) => this.term(i, prelude)), loc: t.loc };
      case "object":
        return {
          type: "object",
          entries: t.entries.map(
            ([k, v]) => [this.term(k, prelude), this.term(v, prelude)] as [KTerm, KTerm],
          ),
          loc: t.loc,
        };
      case "arraycompr":
      case "setcompr": {
        this.scope.push();
        const body = this.body(t.body);
        const term = this.term(t.term, body);
        this.scope.pop();
        return { type: t.type, term, body, loc: t.loc };
      }
      case "objectcompr": {
        this.scope.push();
        const body = this.body(t.body);
        const key = this.term(t.key, body);
        const value = this.term(t.value, body);
        this.scope.pop();
        return { type: "objectcompr", key, value, body, loc: t.loc };
      }
      case "call": {
        const out: KVar = { type: "var", name: this.names.temp(), loc: t.loc };
        // A call already reported (unknown function, arity) leaves its result unbound: that is
        // the same error, not an unsafe expression as well.
        if (!this.callExpr(t, prelude, out)) this.names.failed.add(out.name);
        return out;
      }
      case "templatestring":
        return this.term(this.templateCall(t), prelude);
    }
  }

  /**
   * OPA's lowering of a template string: `internal.template_string([parts])`, where literal
   * parts stay as they are and each expression becomes `{v | v = expr}`, a set that is empty
   * when the expression is undefined (rendered `<undefined>`).
   */
  private templateCall(t: ast.TemplateStringTerm): ast.CallTerm {
    const loc = t.loc;
    const items = t.parts.map((part): ast.Term => {
      if (!("node" in part)) return part;
      const node = part.node;
      if (node.type === "some" || node.type === "every" || node.type === "body" || node.type === "logical")
        return { type: "null", loc: part.loc };
      const v: ast.VarTerm = { type: "var", name: this.names.temp(), loc: part.loc };
      const eq: ast.CallTerm = {
        type: "call",
        op: { type: "var", name: "eq", loc: part.loc },
        args: [v, node],
        loc: part.loc,
      };
      const body: ast.Body = [{ negated: false, node: eq, with: part.with, loc: part.loc }];
      return { type: "setcompr", term: v, body, loc: part.loc };
    });
    const op: ast.RefTerm = {
      type: "ref",
      head: { type: "var", name: "internal", loc },
      path: [{ type: "string", value: "template_string", loc }],
      loc,
    };
    return { type: "call", op, args: [{ type: "array", items, loc }], loc };
  }

  // ------------------------------------------------------------------ calls

  /** What a call's operator names. Reports unknown functions. */
  callee(op: ast.VarTerm | ast.RefTerm): KCallee | undefined {
    const parts = opPath(op);
    if (!parts) {
      this.error("invalid function name", op.loc, "rego_type_error");
      return undefined;
    }
    const [first, ...rest] = parts;
    let full: string[] | undefined;
    if (first === "data") full = parts;
    else if (this.env.imports.has(first!)) {
      this.usage.useImport(first!);
      full = [...this.env.imports.get(first!)!, ...rest];
    } else if (this.env.ruleNames.has(first!)) full = ["data", ...this.env.packagePath, ...parts];
    if (full && full[0] === "data" && this.env.functions.has(full.slice(1).join("/"))) {
      return { kind: "function", path: full.slice(1) };
    }
    const name = parts.join(".");
    if (lookupBuiltin(name) || name === PRINT) return { kind: "builtin", name };
    // As OPA's CheckUndefinedFuncs: a data path is callable when a rule is defined there.
    if (full && full[0] === "data" && this.functionArity(full.slice(1)) !== undefined)
      return { kind: "function", path: full.slice(1) };
    this.error(
      `undefined function ${full?.[0] === "data" ? full.join(".") : name}`,
      op.loc,
      "rego_type_error",
    );
    return undefined;
  }

  /**
   * OPA's compile-time type check, for what literals show: a literal argument whose type the
   * builtin's declaration does not admit is a `rego_type_error` (`count(1)`).
   */
  private literalArgumentsFit(name: string, args: readonly ast.Term[], loc: Location): boolean {
    const declared = lookupBuiltin(name)?.declaration.decl.args;
    if (!declared) return true;
    const kinds = args.map(literalKind);
    const misfit = kinds.some((kind, i) => kind !== undefined && declared[i] && !admits(declared[i], kind));
    if (!misfit) return true;
    const have = kinds.map((k, i) => k ?? typeString(declared[i] ?? { type: "any" }));
    this.error(
      `${name}: invalid argument(s)\n\thave: (${have.join(", ")})\n\twant: (${declared.map(typeString).join(", ")})`,
      loc,
      "rego_type_error",
    );
    return false;
  }

  /** Arity of a callee when known: builtins from the catalog, functions from the rule groups. */
  private arityOf(
    callee: KCallee,
    functionArity: (path: string[]) => number | undefined,
  ): number | undefined {
    if (callee.kind === "builtin")
      return callee.name === PRINT ? undefined : lookupBuiltin(callee.name)?.arity;
    return functionArity(callee.path);
  }

  functionArity: (path: string[]) => number | undefined = () => undefined;

  /** The annotations of the rule being lowered, for `rego.metadata.rule()` / `.chain()`. */
  metadata: { rule: () => ast.JSONValue; chain: () => ast.JSONValue } | undefined;

  /**
   * Lowers a call. With `output`, the call's result binds it (a nested call); otherwise a call
   * with one argument more than its arity binds the last argument, and a call with exactly its
   * arity is a condition.
   */
  private callExpr(t: ast.CallTerm, out: KBody, output: KTerm | undefined, prelude: KBody = out): boolean {
    const callee = this.callee(t.op);
    if (!callee) return false;
    if (callee.kind === "builtin") this.usage.callBuiltin(callee.name, t.loc);
    const arity = this.arityOf(callee, this.functionArity);
    let args = t.args;
    let resultTerm: ast.Term | undefined;
    if (output === undefined && arity !== undefined && args.length === arity + 1) {
      resultTerm = args[args.length - 1];
      args = args.slice(0, -1);
    }
    if (arity !== undefined && args.length !== arity) {
      const name = callee.kind === "builtin" ? callee.name : `data.${callee.path.join(".")}`;
      this.error(
        `${name}: arity mismatch\n\thave: ${args.length} argument${args.length === 1 ? "" : "s"}\n\twant: ${arity} argument${arity === 1 ? "" : "s"}`,
        t.loc,
        "rego_type_error",
      );
      return false;
    }
    if (callee.kind === "builtin" && !this.literalArgumentsFit(callee.name, args, t.loc)) return false;
    if (callee.kind === "builtin" && this.metadata && METADATA_BUILTINS.has(callee.name)) {
      // OPA evaluates these at compile time: the annotations of the enclosing rule.
      const json = callee.name === "rego.metadata.rule" ? this.metadata.rule() : this.metadata.chain();
      const value = this.term(jsonTerm(json, t.loc), prelude);
      const target = output ?? (resultTerm ? this.term(resultTerm, prelude) : undefined);
      if (target) out.push(...unify(target, value, t.loc));
      return true;
    }
    if (callee.kind === "builtin" && callee.name === PRINT && output !== undefined) {
      this.error("print: the result of print cannot be used", t.loc, "rego_type_error");
      return false;
    }
    const koutput = output ?? (resultTerm ? this.term(resultTerm, prelude) : undefined);
    if (callee.kind === "function" && !this.env.functions.has(callee.path.join("/")) && arity === 0) {
      // Calling a rule (`cfg()`) is reading its value.
      const value = pathRef(["data", ...callee.path], t.loc);
      out.push(
        koutput
          ? { kind: "unify", left: koutput, right: value, loc: t.loc }
          : { kind: "term", term: value, loc: t.loc },
      );
      return true;
    }
    const kargs =
      callee.kind === "builtin" && callee.name === PRINT
        ? args.map((a) => this.printArgument(a))
        : args.map((a) => this.term(a, prelude));
    out.push({ kind: "call", callee, args: kargs, output: koutput, loc: t.loc });
    return true;
  }

  /**
   * OPA's `rewritePrintCalls`: each argument of `print` is the set of the values it takes,
   * `{v | v = arg}`, its nested calls inside, so that an undefined argument prints
   * `<undefined>` instead of failing the body.
   */
  private printArgument(arg: ast.Term): KTerm {
    const body: KBody = [];
    const value = this.term(arg, body);
    const v: KVar = { type: "var", name: this.names.temp(), loc: arg.loc };
    body.push({ kind: "unify", left: v, right: value, loc: arg.loc });
    return { type: "setcompr", term: v, body, loc: arg.loc };
  }

  // ------------------------------------------------------------------ expressions

  body(body: ast.Body): KBody {
    const out: KBody = [];
    for (const e of body) this.expr(e, out);
    return out;
  }

  private expr(e: ast.Expr, out: KBody): void {
    const outer = this.exprLoc;
    this.exprLoc = e.loc;
    try {
      this.lowerExpr(e, out);
    } finally {
      this.exprLoc = outer;
    }
  }

  private lowerExpr(e: ast.Expr, out: KBody): void {
    if (e.negated && e.node.type === "call" && e.node.op.type === "var" && e.node.op.name === "assign") {
      // Reported by `opa check`: what is assigned under `not` cannot be seen after it.
      this.usage.report(
        new RegoError("rego_compile_error", "cannot assign vars inside negated expression", e.loc),
      );
    }
    const withPrelude: KBody = [];
    const mods: KWith[] = [];
    for (const w of e.with) {
      const mod = this.withModifier(w, withPrelude);
      if (mod) mods.push(mod);
    }
    out.push(...withPrelude);

    const governed: KBody = [];
    if (e.negated) {
      // As OPA's RewriteExprTerms: the calls nested in a negated expression are evaluated before
      // it, outside the `not` (`not f(g(x))` is `g(x, t); not f(t)`), so an undefined nested
      // call leaves the expression undefined. A negated body (`not { … }`) keeps its own, and
      // so does every negation under OPA's improved negation.
      const inner: KBody = [];
      const isBody = e.node.type === "body" || e.node.type === "logical" || this.env.improvedNegation;
      this.scope.push();
      this.exprNode(e, inner, isBody ? inner : governed);
      this.scope.pop();
      governed.push({ kind: "not", body: inner, loc: e.loc, expr: !isBody });
    } else {
      this.exprNode(e, governed, governed);
    }
    if (mods.length > 0) out.push({ kind: "with", mods, body: governed, loc: e.loc });
    else out.push(...governed);
  }

  private withModifier(w: ast.With, prelude: KBody): KWith | undefined {
    const target = this.withTarget(w);
    if (!target) return undefined;
    if (target.kind === "callee") {
      // `with f as g`: a function or builtin name (not a local) replaces the callee.
      const value = w.value;
      const isName =
        (value.type === "var" && this.scope.lookup(value.name) === undefined) ||
        (value.type === "ref" && opPath(value) !== undefined);
      if (isName && (value.type === "var" || value.type === "ref")) {
        const replacement = this.calleeOrUndefined(value);
        if (replacement) return { target, value: { type: "null", loc: value.loc }, replacement, loc: w.loc };
      }
    }
    const value = this.term(w.value, prelude);
    return { target, value, replacement: undefined, loc: w.loc };
  }

  /** Like `callee`, but quietly undefined for names that are neither functions nor builtins. */
  private calleeOrUndefined(op: ast.VarTerm | ast.RefTerm): KCallee | undefined {
    const before = this.errors.length;
    const callee = this.callee(op);
    if (this.errors.length > before) {
      this.errors.length = before;
      return undefined;
    }
    // A rule that is not a function (`with f as some_rule`) replaces calls by its value.
    if (callee?.kind === "function" && !this.env.functions.has(callee.path.join("/"))) return undefined;
    return callee;
  }

  private withTarget(w: ast.With): KWith["target"] | undefined {
    const parts = opPath(w.target);
    if (!parts) {
      this.error(
        "with keyword target must reference existing input, data, or a function",
        w.target.loc,
        "rego_type_error",
      );
      return undefined;
    }
    const [first, ...rest] = parts;
    if (first === "input") return { kind: "input", path: rest };
    if (first === "data") {
      const key = rest.join("/");
      if (this.env.functions.has(key)) return { kind: "callee", callee: { kind: "function", path: rest } };
      return { kind: "data", path: rest };
    }
    const imported = this.env.imports.get(first!);
    if (imported) {
      this.usage.useImport(first!);
      const full = [...imported, ...rest];
      if (full[0] === "input") return { kind: "input", path: full.slice(1) };
      if (this.env.functions.has(full.slice(1).join("/"))) {
        return { kind: "callee", callee: { kind: "function", path: full.slice(1) } };
      }
      return { kind: "data", path: full.slice(1) };
    }
    if (this.env.ruleNames.has(first!)) {
      const full = [...this.env.packagePath, ...parts];
      if (this.env.functions.has(full.join("/"))) {
        return { kind: "callee", callee: { kind: "function", path: full } };
      }
      return { kind: "data", path: full };
    }
    const name = parts.join(".");
    if (lookupBuiltin(name)) return { kind: "callee", callee: { kind: "builtin", name } };
    this.error(
      "with keyword target must reference existing input, data, or a function",
      w.target.loc,
      "rego_type_error",
    );
    return undefined;
  }

  /**
   * Lowers an expression's node into `out`; the calls nested in its terms are lifted into
   * `prelude` (the same list, but for a negated expression the place before its `not`).
   */
  private exprNode(e: ast.Expr, out: KBody, prelude: KBody): void {
    const node = e.node;
    switch (node.type) {
      case "some":
        this.someDecl(node, out);
        return;
      case "every":
        this.every(node, out, prelude);
        return;
      case "body":
        // Names declared inside a negated body stay inside it.
        this.scope.push();
        for (const inner of node.body) this.expr(inner, out);
        this.scope.pop();
        return;
      case "logical":
        this.logical(node, out);
        return;
      case "call":
        this.topLevelCall(node, out, prelude);
        return;
      default: {
        const term = this.term(node, prelude);
        out.push({ kind: "term", term, loc: e.loc });
      }
    }
  }

  /**
   * `a and b` is the conjunction of both operands, bindings flowing on as in a body; `a or b`
   * succeeds when either operand does: `not { not { a }; not { b } }` (its operands' bindings
   * stay inside it).
   */
  private logical(node: ast.LogicalExpr, out: KBody): void {
    if (node.op === "and") {
      for (const inner of node.lhs) this.expr(inner, out);
      for (const inner of node.rhs) this.expr(inner, out);
      return;
    }
    const loc = node.loc;
    const negate = (body: ast.Body): ast.Expr => ({
      negated: true,
      node: { type: "body", body, loc },
      with: [],
      loc,
    });
    this.expr(negate([negate(node.lhs), negate(node.rhs)]), out);
  }

  private topLevelCall(t: ast.CallTerm, out: KBody, prelude: KBody): void {
    const name = t.op.type === "var" ? t.op.name : undefined;
    if ((name === "eq" || name === "assign") && t.args.length === 2) {
      const [left, right] = t.args as [ast.Term, ast.Term];
      if (name === "assign") {
        // The right side is read in the scope before the declaration takes effect.
        const r = this.term(right, prelude);
        this.declarePattern(left, "assigned");
        const l = this.term(left, prelude);
        out.push(...unify(l, r, t.loc));
        return;
      }
      const l = this.term(left, prelude);
      const r = this.term(right, prelude);
      out.push(...unify(l, r, t.loc));
      return;
    }
    this.callExpr(t, out, undefined, prelude);
  }

  private someDecl(node: ast.SomeDecl, out: KBody): void {
    for (const symbol of node.symbols) {
      if (symbol.type === "var") {
        this.declarePattern(symbol, "declared");
        continue;
      }
      // `some x in xs`: the iteration uses what it declares.
      if (symbol.type !== "call" || symbol.op.type !== "ref") {
        this.error("unexpected some declaration", symbol.loc);
        continue;
      }
      const op = opPath(symbol.op)?.join(".");
      if (op === "internal.member_2" && symbol.args.length === 2) {
        const [value, collection] = symbol.args as [ast.Term, ast.Term];
        const coll = this.term(collection, out);
        this.declarePattern(value, "declared", "iterated");
        const v = this.term(value, out);
        const key: KVar = { type: "var", name: this.names.wildcard(), loc: value.loc };
        out.push({ kind: "unify", left: v, right: refInto(coll, key, symbol.loc), loc: symbol.loc });
      } else if (op === "internal.member_3" && symbol.args.length === 3) {
        const [key, value, collection] = symbol.args as [ast.Term, ast.Term, ast.Term];
        const coll = this.term(collection, out);
        this.declarePattern(key, "declared", "iterated");
        this.declarePattern(value, "declared", "iterated");
        const k = this.term(key, out);
        const v = this.term(value, out);
        out.push({ kind: "unify", left: v, right: refInto(coll, k, symbol.loc), loc: symbol.loc });
      } else {
        this.error("unexpected some declaration", symbol.loc);
      }
    }
  }

  private every(node: ast.Every, out: KBody, prelude: KBody): void {
    const domain = this.term(node.domain, prelude);
    this.scope.push();
    // OPA reports an unused key or value at the first expression of the body.
    const outer = this.exprLoc;
    this.exprLoc = node.body[0]?.loc ?? node.loc;
    if (node.key) this.declarePattern(node.key, "declared", "every");
    this.declarePattern(node.value, "declared", "every");
    this.exprLoc = outer;
    const keyTerm = node.key ? this.term(node.key, prelude) : undefined;
    const key: KVar =
      keyTerm?.type === "var" ? keyTerm : { type: "var", name: this.names.wildcard(), loc: node.loc };
    const valuePrelude: KBody = [];
    const value = this.term(node.value, valuePrelude);
    const body = this.body(node.body);
    this.scope.pop();
    const keyCheck: KBody =
      keyTerm && keyTerm.type !== "var" ? [{ kind: "unify", left: keyTerm, right: key, loc: node.loc }] : [];
    out.push({
      kind: "every",
      key,
      value,
      domain,
      body: [...keyCheck, ...valuePrelude, ...body],
      loc: node.loc,
    });
  }
}

/** Unification, split element-wise when both sides are composites of the same shape. */
export function unify(left: KTerm, right: KTerm, loc: Location): KExpr[] {
  if (left.type === "array" && right.type === "array" && left.items.length === right.items.length) {
    return left.items.flatMap((item, i) => unify(item, right.items[i]!, loc));
  }
  if (left.type === "object" && right.type === "object" && left.entries.length === right.entries.length) {
    const rightByKey = new Map<string, KTerm>();
    for (const [k, v] of right.entries) {
      const key = groundKey(k);
      if (key === undefined) return [{ kind: "unify", left, right, loc }];
      rightByKey.set(key, v);
    }
    const pairs: KExpr[] = [];
    for (const [k, v] of left.entries) {
      const key = groundKey(k);
      const other = key === undefined ? undefined : rightByKey.get(key);
      if (other === undefined) return [{ kind: "unify", left, right, loc }];
      pairs.push(...unify(v, other, loc));
    }
    return pairs;
  }
  return [{ kind: "unify", left, right, loc }];
}

function groundKey(t: KTerm): string | undefined {
  switch (t.type) {
    case "null":
      return "null";
    case "boolean":
      return String(t.value);
    case "number":
      return `n:${t.value}`;
    case "string":
      return `s:${t.value}`;
    default:
      return undefined;
  }
}

function refInto(collection: KTerm, key: KTerm, loc: Location): KTerm {
  if (collection.type === "ref")
    return { type: "ref", head: collection.head, path: [...collection.path, key], loc };
  return { type: "ref", head: collection, path: [key], loc };
}

export function pathRef(path: string[], loc: Location): KTerm {
  const [head, ...rest] = path;
  const headVar: KVar = { type: "var", name: head!, loc };
  if (rest.length === 0) return headVar;
  return { type: "ref", head: headVar, path: rest.map((p) => ({ type: "string", value: p, loc })), loc };
}

/** `a.b.c` as `["a", "b", "c"]` when every part after the head var is a string. */
export function opPath(op: ast.Term): string[] | undefined {
  if (op.type === "var") return [op.name];
  if (op.type !== "ref" || op.head.type !== "var") return undefined;
  const parts = [op.head.name];
  for (const p of op.path) {
    if (p.type !== "string") return undefined;
    parts.push(p.value);
  }
  return parts;
}

/** The kind of value a literal term is; undefined when only evaluation tells. */
function literalKind(t: ast.Term): LiteralKind | undefined {
  switch (t.type) {
    case "null":
    case "boolean":
    case "number":
    case "string":
    case "array":
    case "object":
    case "set":
      return t.type;
    case "arraycompr":
      return "array";
    case "setcompr":
      return "set";
    case "objectcompr":
      return "object";
    case "templatestring":
      return "string";
    default:
      return undefined;
  }
}
