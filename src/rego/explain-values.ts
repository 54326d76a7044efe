/**
 * The values an explanation shows beside a body expression (issue 31): the refs, calls and
 * comprehensions written in it, evaluated again in JavaScript on what the traced evaluation knew
 * (the expression's variables as the trace bound them, the input, the data, the rules' values)
 * with the builtins' reference implementations. Nothing here decides anything: a term this small
 * evaluator cannot follow (a user function, a nondeterministic builtin, iteration it does not
 * know) simply shows no value.
 */
import { builtinTable, lookupBuiltin, systemContext } from "./builtins/index.ts";
import {
  collectionEntries,
  FALSE,
  fromJSON,
  lookup,
  makeArray,
  makeObject,
  makeSet,
  makeString,
  NULL,
  numberFromText,
  TRUE,
  toJSON,
  type Value,
} from "./plan/value.ts";
import type { Body, Expr, Module, Term } from "./syntax/ast.ts";
import { printTerm } from "./syntax/printer.ts";

/** What the evaluator reads: a rule's value by its data path (`writ/args`), undefined when it has none. */
export interface ValueScope {
  input: unknown;
  data: unknown;
  /** The module the expression is written in (its package and imports resolve names). */
  module: Module;
  /** Data paths of the rules (not functions) that can be read, joined with "/". */
  rules: ReadonlySet<string>;
  ruleValue(path: string): unknown;
  /** The rule's variables as the trace bound them up to this expression. */
  bindings: Readonly<Record<string, unknown>>;
}

/** One value shown beside an expression: the term as written and its value (JSON). */
export interface ShownValue {
  term: string;
  value: unknown;
}

/** Comparison and membership operators: their operands are shown, not the operator's boolean. */
const OPERATORS = new Set([
  "eq",
  "assign",
  "equal",
  "neq",
  "lt",
  "lte",
  "gt",
  "gte",
  "internal.member_2",
  "internal.member_3",
]);

/** The values of the refs, calls and comprehensions written in `expr`, each once, in source order. */
export function expressionValues(expr: Expr, scope: ValueScope): ShownValue[] {
  const evaluator = new TermEvaluator(scope);
  const shown = new Map<string, ShownValue>();
  const show = (term: Term): void => {
    const text = printTerm(term);
    if (shown.has(text)) return;
    const value = evaluator.term(term, new Map());
    if (value !== undefined) shown.set(text, { term: text, value: toJSON(value) });
  };
  const visit = (term: Term, top: boolean): void => {
    switch (term.type) {
      case "var":
        if (term.name !== "_" && !term.name.startsWith("$")) show(term);
        return;
      case "ref":
        show(term);
        for (const p of term.path) if (p.type !== "string") visit(p, false);
        return;
      case "call": {
        const name = callName(term);
        // A comparison at the top of the expression held or not: its operands are what to show.
        if (!top || name === undefined || !OPERATORS.has(name)) show(term);
        for (const a of term.args) visit(a, false);
        return;
      }
      case "array":
      case "set":
        for (const i of term.items) visit(i, false);
        return;
      case "object":
        for (const [k, v] of term.entries) {
          visit(k, false);
          visit(v, false);
        }
        return;
      case "arraycompr":
      case "setcompr":
      case "objectcompr":
        show(term);
        return;
      default:
        return;
    }
  };
  const node = expr.node;
  if (node.type === "some") {
    for (const s of node.symbols) {
      if (s.type === "call") for (const a of s.args) visit(a, false);
      else visit(s, false);
    }
  } else if (node.type === "every") visit(node.domain, false);
  else if (node.type !== "body" && node.type !== "logical") visit(node, true);
  return [...shown.values()];
}

/** The rules (data paths such as `writ/denials`) the expression reads, in source order. */
export function referencedRules(expr: Expr, scope: ValueScope): string[] {
  const evaluator = new TermEvaluator(scope);
  const found = new Set<string>();
  const visitTerm = (t: Term): void => {
    if (t.type === "var" || t.type === "ref") {
      const rule = evaluator.ruleOf(t);
      if (rule !== undefined) found.add(rule);
    }
    for (const child of childTerms(t)) visitTerm(child);
    for (const e of childBodies(t)) visitExpr(e);
  };
  const visitExpr = (e: Expr): void => {
    const node = e.node;
    if (node.type === "some") node.symbols.forEach(visitTerm);
    else if (node.type === "every") {
      visitTerm(node.domain);
      node.body.forEach(visitExpr);
    } else if (node.type === "body") node.body.forEach(visitExpr);
    else if (node.type === "logical") [...node.lhs, ...node.rhs].forEach(visitExpr);
    else visitTerm(node);
  };
  visitExpr(expr);
  return [...found];
}

function childTerms(t: Term): Term[] {
  switch (t.type) {
    case "ref":
      return [t.head, ...t.path];
    case "array":
    case "set":
      return t.items;
    case "object":
      return t.entries.flat();
    case "call":
      return [t.op, ...t.args];
    case "arraycompr":
    case "setcompr":
      return [t.term];
    case "objectcompr":
      return [t.key, t.value];
    default:
      return [];
  }
}

function childBodies(t: Term): Body {
  return t.type === "arraycompr" || t.type === "setcompr" || t.type === "objectcompr" ? t.body : [];
}

function callName(term: Extract<Term, { type: "call" }>): string | undefined {
  const op = term.op;
  if (op.type === "var") return op.name;
  if (op.head.type !== "var") return undefined;
  const parts = [op.head.name];
  for (const p of op.path) {
    if (p.type !== "string") return undefined;
    parts.push(p.value);
  }
  return parts.join(".");
}

/** Locals of a comprehension being evaluated, on top of the trace's bindings. */
type Locals = Map<string, Value>;

class TermEvaluator {
  private readonly input: Value;
  private readonly data: Value;
  private readonly ruleValues = new Map<string, Value | undefined>();
  private readonly context = systemContext();

  constructor(private readonly scope: ValueScope) {
    this.input = fromJSON(scope.input ?? null);
    this.data = fromJSON(scope.data ?? {});
  }

  term(t: Term, locals: Locals): Value | undefined {
    switch (t.type) {
      case "null":
        return NULL;
      case "boolean":
        return t.value ? TRUE : FALSE;
      case "number":
        return numberFromText(t.value);
      case "string":
        return makeString(t.value);
      case "var":
        return this.variable(t.name, locals);
      case "ref":
        return this.ref(t, locals);
      case "array": {
        const items = this.all(t.items, locals);
        return items && makeArray(items);
      }
      case "set": {
        const items = this.all(t.items, locals);
        return items && makeSet(items);
      }
      case "object": {
        const entries: Array<[Value, Value]> = [];
        for (const [k, v] of t.entries) {
          const key = this.term(k, locals);
          const value = this.term(v, locals);
          if (key === undefined || value === undefined) return undefined;
          entries.push([key, value]);
        }
        return makeObject(entries);
      }
      case "call":
        return this.call(t, locals);
      case "arraycompr":
      case "setcompr":
      case "objectcompr":
        return this.comprehension(t, locals);
      default:
        return undefined;
    }
  }

  private all(terms: readonly Term[], locals: Locals): Value[] | undefined {
    const out: Value[] = [];
    for (const t of terms) {
      const v = this.term(t, locals);
      if (v === undefined) return undefined;
      out.push(v);
    }
    return out;
  }

  private variable(name: string, locals: Locals): Value | undefined {
    const local = locals.get(name);
    if (local !== undefined) return local;
    if (Object.hasOwn(this.scope.bindings, name)) return fromJSON(this.scope.bindings[name]);
    if (name === "input") return this.input;
    if (name === "data") return this.data;
    const imported = this.scope.module.imports.find((i) => importAlias(i) === name);
    if (imported) return this.term(imported.path, new Map());
    return this.dataPath([...this.scope.module.package.path, name]);
  }

  private ref(t: Extract<Term, { type: "ref" }>, locals: Locals): Value | undefined {
    // A ref into `data` is read rule by rule: the longest prefix that names a rule gives its value.
    const head = t.head;
    if (head.type === "var" && !locals.has(head.name) && !Object.hasOwn(this.scope.bindings, head.name)) {
      const root = this.rootPath(head.name);
      if (root !== undefined) {
        const keys: string[] = [...root];
        let i = 0;
        for (; i < t.path.length; i++) {
          const key = this.term(t.path[i]!, locals);
          if (key?.type !== "string") break;
          keys.push(key.value);
        }
        for (let n = keys.length; n > root.length || (n === root.length && n > 0); n--) {
          const prefix = keys.slice(0, n);
          if (!this.scope.rules.has(prefix.join("/"))) continue;
          const rest = this.rest(t.path.slice(i), locals);
          return (
            rest && this.walk(this.dataPath(prefix), [...keys.slice(n).map((k) => makeString(k)), ...rest])
          );
        }
      }
    }
    const base = this.term(head, locals);
    const rest = this.rest(t.path, locals);
    return rest && this.walk(base, rest);
  }

  /** The data path a ref's head names (`data` → [], a rule or import of the package → its path). */
  private rootPath(name: string): string[] | undefined {
    if (name === "data") return [];
    if (name === "input") return undefined;
    const imported = this.scope.module.imports.find((i) => importAlias(i) === name);
    if (imported) {
      const path = refStrings(imported.path);
      return path?.[0] === "data" ? path.slice(1) : undefined;
    }
    const own = [...this.scope.module.package.path, name];
    return [...this.scope.rules].some((r) => r === own.join("/") || r.startsWith(`${own.join("/")}/`))
      ? own
      : undefined;
  }

  /** The rule path (`writ/denials`) a var or ref reads, when it reads one. */
  ruleOf(t: Term): string | undefined {
    const head = t.type === "ref" ? t.head : t;
    if (head.type !== "var" || Object.hasOwn(this.scope.bindings, head.name)) return undefined;
    const root = this.rootPath(head.name);
    if (root === undefined) return undefined;
    const keys = [...root];
    for (const p of t.type === "ref" ? t.path : []) {
      if (p.type !== "string") break;
      keys.push(p.value);
    }
    for (let n = keys.length; n > 0; n--) {
      const prefix = keys.slice(0, n).join("/");
      if (this.scope.rules.has(prefix)) return prefix;
    }
    return undefined;
  }

  private rest(path: readonly Term[], locals: Locals): Value[] | undefined {
    return this.all(path, locals);
  }

  private walk(base: Value | undefined, keys: readonly Value[]): Value | undefined {
    let value = base;
    for (const key of keys) {
      if (value === undefined) return undefined;
      value = lookup(value, key);
    }
    return value;
  }

  private dataPath(path: readonly string[]): Value | undefined {
    const joined = path.join("/");
    if (this.scope.rules.has(joined)) {
      if (!this.ruleValues.has(joined)) {
        const json = this.scope.ruleValue(joined);
        this.ruleValues.set(joined, json === undefined ? undefined : fromJSON(json));
      }
      return this.ruleValues.get(joined);
    }
    return this.walk(
      this.data,
      path.map((p) => makeString(p)),
    );
  }

  private call(t: Extract<Term, { type: "call" }>, locals: Locals): Value | undefined {
    const name = callName(t);
    if (name === undefined) return undefined;
    const spec = lookupBuiltin(name);
    const def = builtinTable.get(name);
    // A user function, or a builtin whose value may differ from the one the policy saw.
    if (!spec || !def || spec.nondeterministic || spec.implementation === "unavailable") return undefined;
    if (t.args.length !== def.arity) return undefined;
    const args = this.all(t.args, locals);
    if (args === undefined) return undefined;
    try {
      return def.fn(args, this.context);
    } catch {
      return undefined;
    }
  }

  /** Comprehensions whose bodies iterate with `some … in`, assign with `:=` and filter. */
  private comprehension(
    t: Extract<Term, { type: "arraycompr" | "setcompr" | "objectcompr" }>,
    locals: Locals,
  ): Value | undefined {
    const solutions = this.solve(t.body, 0, locals);
    if (solutions === undefined) return undefined;
    if (t.type === "objectcompr") {
      const entries: Array<[Value, Value]> = [];
      for (const s of solutions) {
        const k = this.term(t.key, s);
        const v = this.term(t.value, s);
        if (k === undefined || v === undefined) return undefined;
        entries.push([k, v]);
      }
      return makeObject(entries);
    }
    const items: Value[] = [];
    for (const s of solutions) {
      const v = this.term(t.term, s);
      if (v === undefined) return undefined;
      items.push(v);
    }
    return t.type === "arraycompr" ? makeArray(items) : makeSet(items);
  }

  /** The bindings under which `body[i…]` holds; undefined when the body is beyond this evaluator. */
  private solve(body: Body, i: number, locals: Locals, budget = { steps: 10_000 }): Locals[] | undefined {
    if (--budget.steps < 0) return undefined;
    if (i === body.length) return [locals];
    const expr = body[i]!;
    if (expr.with.length > 0) return undefined;
    const next = (l: Locals): Locals[] | undefined => this.solve(body, i + 1, l, budget);
    const node = expr.node;
    if (node.type === "some") {
      const decl = node.symbols[0];
      if (node.symbols.length !== 1 || decl?.type !== "call")
        return node.symbols.every((s) => s.type === "var") ? next(locals) : undefined;
      const domain = this.term(decl.args.at(-1)!, locals);
      if (domain === undefined) return [];
      const targets = decl.args.slice(0, -1);
      const out: Locals[] = [];
      for (const [key, value] of collectionEntries(domain) ?? []) {
        const bound = new Map(locals);
        const pairs: Array<[Term, Value]> =
          targets.length === 2
            ? [
                [targets[0]!, key],
                [targets[1]!, value],
              ]
            : [[targets[0]!, value]];
        if (!pairs.every(([target, v]) => bind(target, v, bound))) continue;
        const rest = next(bound);
        if (rest === undefined) return undefined;
        out.push(...rest);
      }
      return out;
    }
    if (node.type !== "call" && node.type !== "ref" && node.type !== "var" && node.type !== "boolean")
      return undefined;
    if (node.type === "call" && (callName(node) === "assign" || callName(node) === "eq")) {
      const [target, source] = node.args;
      if (target?.type === "var" && source && !expr.negated && !locals.has(target.name)) {
        const value = this.term(source, locals);
        if (value === undefined) return [];
        return next(new Map(locals).set(target.name, value));
      }
    }
    const value = this.term(node, locals);
    const holds = value !== undefined && !(value.type === "boolean" && !value.value);
    return holds !== expr.negated ? next(locals) : [];
  }
}

/** Binds a plain variable (or checks a known value) for a `some … in` target. */
function bind(target: Term, value: Value, locals: Locals): boolean {
  if (target.type !== "var") return false;
  if (target.name !== "_") locals.set(target.name, value);
  return true;
}

function importAlias(i: Module["imports"][number]): string | undefined {
  if (i.alias) return i.alias;
  const path = refStrings(i.path);
  return path?.at(-1);
}

function refStrings(t: Term): string[] | undefined {
  if (t.type === "var") return [t.name];
  if (t.type !== "ref" || t.head.type !== "var") return undefined;
  const out = [t.head.name];
  for (const p of t.path) {
    if (p.type !== "string") return undefined;
    out.push(p.value);
  }
  return out;
}
