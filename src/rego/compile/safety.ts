/**
 * Safety: every var must be bound before it is read. Bodies are reordered the way OPA does it:
 * repeatedly take the first expression whose inputs are bound, add what it binds, and report the
 * vars of expressions that can never be scheduled as `rego_unsafe_var_error`.
 *
 * A var is bound by unification with a known value, by iteration (a var used as a ref operand,
 * `xs[i]`), or as the output of a call. Comprehension, `every` and `not` bodies are closures:
 * their vars that also occur in the enclosing body are inputs; the others are their own.
 */
import { type Location, RegoError } from "../errors.ts";
import type { KBody, KExpr, KTerm } from "./kernel.ts";
import { isGenerated, sourceName } from "./lower.ts";

const ROOTS = new Set(["input", "data"]);

interface TermVars {
  /** Vars that must already be bound (ref heads, set elements, object keys, closure inputs). */
  needed: Set<string>;
  /** Vars bound by iterating a ref (`xs[i]`). */
  iterated: Set<string>;
  /** Vars in pattern position: bound by unification when the other side is known. */
  pattern: Set<string>;
}

function emptyVars(): TermVars {
  return { needed: new Set(), iterated: new Set(), pattern: new Set() };
}

/** Vars of a term, not looking into closures. */
export function varsOfTerm(t: KTerm, acc: Set<string>, intoClosures: boolean): Set<string> {
  switch (t.type) {
    case "var":
      if (!ROOTS.has(t.name)) acc.add(t.name);
      break;
    case "ref":
      varsOfTerm(t.head, acc, intoClosures);
      for (const p of t.path) varsOfTerm(p, acc, intoClosures);
      break;
    case "array":
    case "set":
      for (const i of t.items) varsOfTerm(i, acc, intoClosures);
      break;
    case "object":
      for (const [k, v] of t.entries) {
        varsOfTerm(k, acc, intoClosures);
        varsOfTerm(v, acc, intoClosures);
      }
      break;
    case "arraycompr":
    case "setcompr":
      if (intoClosures) {
        varsOfTerm(t.term, acc, true);
        varsOfBody(t.body, acc, true);
      }
      break;
    case "objectcompr":
      if (intoClosures) {
        varsOfTerm(t.key, acc, true);
        varsOfTerm(t.value, acc, true);
        varsOfBody(t.body, acc, true);
      }
      break;
    default:
      break;
  }
  return acc;
}

export function varsOfExpr(e: KExpr, acc: Set<string>, intoClosures: boolean): Set<string> {
  switch (e.kind) {
    case "unify":
      varsOfTerm(e.left, acc, intoClosures);
      varsOfTerm(e.right, acc, intoClosures);
      break;
    case "call":
      for (const a of e.args) varsOfTerm(a, acc, intoClosures);
      if (e.output) varsOfTerm(e.output, acc, intoClosures);
      break;
    case "term":
      varsOfTerm(e.term, acc, intoClosures);
      break;
    case "not":
      varsOfBody(e.body, acc, intoClosures);
      break;
    case "every":
      varsOfTerm(e.domain, acc, intoClosures);
      if (intoClosures) {
        varsOfTerm(e.key, acc, true);
        varsOfTerm(e.value, acc, true);
        varsOfBody(e.body, acc, true);
      }
      break;
    case "with":
      for (const m of e.mods) varsOfTerm(m.value, acc, intoClosures);
      varsOfBody(e.body, acc, intoClosures);
      break;
  }
  return acc;
}

export function varsOfBody(body: KBody, acc: Set<string>, intoClosures: boolean): Set<string> {
  for (const e of body) varsOfExpr(e, acc, intoClosures);
  return acc;
}

/** Collects closures (comprehensions) directly inside a term, not nested ones. */
function closuresOf(t: KTerm, acc: KTerm[]): KTerm[] {
  switch (t.type) {
    case "ref":
      closuresOf(t.head, acc);
      for (const p of t.path) closuresOf(p, acc);
      break;
    case "array":
    case "set":
      for (const i of t.items) closuresOf(i, acc);
      break;
    case "object":
      for (const [k, v] of t.entries) {
        closuresOf(k, acc);
        closuresOf(v, acc);
      }
      break;
    case "arraycompr":
    case "setcompr":
    case "objectcompr":
      acc.push(t);
      break;
    default:
      break;
  }
  return acc;
}

export class SafetyChecker {
  readonly errors: RegoError[] = [];
  private readonly reported = new Set<string>();

  /**
   * Reorders `body` so that it is safe given `bound` (vars bound before it runs). `visible` are
   * the vars of the enclosing bodies: a closure's vars in that set are its inputs. Returns the
   * reordered body and the vars bound after it, or undefined (with errors) when unsafe.
   */
  reorder(
    body: KBody,
    bound: ReadonlySet<string>,
    visible: ReadonlySet<string>,
    report = true,
  ): { body: KBody; bound: Set<string> } | undefined {
    const safe = new Set(bound);
    const outerVisible = new Set(visible);
    varsOfBody(body, outerVisible, false);
    const remaining = [...body];
    const ordered: KBody = [];
    while (remaining.length > 0) {
      let progressed = false;
      for (let i = 0; i < remaining.length; i++) {
        const scheduled = this.trySchedule(remaining[i]!, safe, outerVisible);
        if (scheduled) {
          ordered.push(scheduled);
          remaining.splice(i, 1);
          progressed = true;
          break;
        }
      }
      if (!progressed) {
        if (report) this.reportUnsafe(remaining, safe, outerVisible);
        return undefined;
      }
    }
    return { body: ordered, bound: safe };
  }

  /** Reports `var x is unsafe` for vars that no ordering can bind, once per var. */
  reportUnsafe(exprs: KBody, safe: ReadonlySet<string>, visible: ReadonlySet<string>): void {
    const unsafe = new Map<string, Location>();
    const note = (t: KTerm) => {
      if (t.type === "var" && !ROOTS.has(t.name) && !safe.has(t.name) && !unsafe.has(t.name))
        unsafe.set(t.name, t.loc);
    };
    for (const e of exprs) walkVarTerms(e, note, visible);
    const byName = new Map<string, Location>();
    for (const [name, loc] of unsafe) {
      const source = sourceName(name);
      // Temporaries stand for calls whose inputs are the real culprits; report source vars.
      if (isGenerated(name) && !name.startsWith("$w")) continue;
      if (!byName.has(source) || compareLoc(loc, byName.get(source)!) < 0) byName.set(source, loc);
    }
    if (byName.size === 0 && unsafe.size > 0) {
      const [first] = [...unsafe.values()];
      this.push("expression is unsafe", first!);
      return;
    }
    for (const [name, loc] of [...byName].sort((a, b) => compareLoc(a[1], b[1]))) {
      this.push(`var ${name} is unsafe`, loc);
    }
  }

  private push(detail: string, loc: Location): void {
    const key = `${loc.file}:${loc.offset}:${detail}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.errors.push(new RegoError("rego_unsafe_var_error", detail, loc));
  }

  private analyze(
    t: KTerm,
    safe: ReadonlySet<string>,
    visible: ReadonlySet<string>,
    out: TermVars,
    position: "pattern" | "needed",
  ): void {
    switch (t.type) {
      case "var":
        if (ROOTS.has(t.name) || safe.has(t.name)) return;
        (position === "pattern" ? out.pattern : out.needed).add(t.name);
        return;
      case "ref":
        this.analyze(t.head, safe, visible, out, "needed");
        for (const p of t.path) {
          if (p.type === "var") {
            if (!ROOTS.has(p.name) && !safe.has(p.name)) out.iterated.add(p.name);
            continue;
          }
          // A composite operand (`xs[[1, x]]`) is a pattern matched against each key.
          const operand = emptyVars();
          this.analyze(p, safe, visible, operand, "pattern");
          addAll(out.needed, operand.needed);
          addAll(out.iterated, operand.iterated);
          addAll(out.iterated, operand.pattern);
        }
        return;
      case "array":
        for (const i of t.items) this.analyze(i, safe, visible, out, position);
        return;
      case "object":
        for (const [k, v] of t.entries) {
          this.analyze(k, safe, visible, out, "needed");
          this.analyze(v, safe, visible, out, position);
        }
        return;
      case "set":
        for (const i of t.items) this.analyze(i, safe, visible, out, "needed");
        return;
      case "arraycompr":
      case "setcompr":
      case "objectcompr":
        for (const v of varsOfTerm(t, new Set(), true)) {
          if (visible.has(v) && !safe.has(v)) out.needed.add(v);
        }
        return;
      default:
        return;
    }
  }

  private termVars(
    t: KTerm,
    safe: ReadonlySet<string>,
    visible: ReadonlySet<string>,
    position: "pattern" | "needed",
  ): TermVars {
    const out = emptyVars();
    this.analyze(t, safe, visible, out, position);
    return out;
  }

  /** Returns the expression with its nested bodies ordered, and extends `safe`, or undefined. */
  private trySchedule(e: KExpr, safe: Set<string>, visible: ReadonlySet<string>): KExpr | undefined {
    switch (e.kind) {
      case "term": {
        const v = this.termVars(e.term, safe, visible, "needed");
        if (!subset(v.needed, safe) || v.pattern.size > 0) return undefined;
        addAll(safe, v.iterated);
        return { ...e, term: this.closures(e.term, safe, visible) };
      }
      case "call": {
        const args = e.args.map((a) => this.termVars(a, safe, visible, "needed"));
        for (const a of args) if (!subset(a.needed, safe) || a.pattern.size > 0) return undefined;
        const afterArgs = new Set(safe);
        for (const a of args) addAll(afterArgs, a.iterated);
        if (e.output) {
          const o = this.termVars(e.output, afterArgs, visible, "pattern");
          if (!subset(o.needed, afterArgs)) return undefined;
          addAll(afterArgs, o.iterated);
          addAll(afterArgs, o.pattern);
        }
        const scheduled: KExpr = {
          ...e,
          args: e.args.map((a) => this.closures(a, safe, visible)),
          output: e.output ? this.closures(e.output, safe, visible) : undefined,
        };
        addAll(safe, afterArgs);
        return scheduled;
      }
      case "unify": {
        const l = this.termVars(e.left, safe, visible, "pattern");
        const r = this.termVars(e.right, safe, visible, "pattern");
        if (!subset(l.needed, safe) || !subset(r.needed, safe)) return undefined;
        const after = new Set(safe);
        addAll(after, l.iterated);
        addAll(after, r.iterated);
        const leftKnown = subset(l.pattern, after);
        const rightKnown = subset(r.pattern, after);
        if (!leftKnown && !rightKnown) return undefined;
        addAll(after, l.pattern);
        addAll(after, r.pattern);
        const scheduled: KExpr = {
          ...e,
          left: this.closures(e.left, safe, visible),
          right: this.closures(e.right, safe, visible),
        };
        addAll(safe, after);
        return scheduled;
      }
      case "not": {
        const needed = [...varsOfBody(e.body, new Set(), false)].filter((v) => !v.includes("$"));
        if (!needed.every((v) => safe.has(v))) return undefined;
        const inner = this.reorder(e.body, safe, visible, false);
        if (!inner) return undefined;
        return { ...e, body: inner.body };
      }
      case "every": {
        const domain = this.termVars(e.domain, safe, visible, "needed");
        if (!subset(domain.needed, safe) || domain.pattern.size > 0) return undefined;
        const closureInputs = [...varsOfBody(e.body, new Set(), true)].filter(
          (v) => visible.has(v) && v !== e.key.name,
        );
        if (!closureInputs.every((v) => safe.has(v))) return undefined;
        const innerBound = new Set(safe);
        addAll(innerBound, domain.iterated);
        innerBound.add(e.key.name);
        varsOfTerm(e.value, innerBound, false);
        const inner = this.reorder(e.body, innerBound, visible, false);
        if (!inner) return undefined;
        addAll(safe, domain.iterated);
        return { ...e, domain: this.closures(e.domain, safe, visible), body: inner.body };
      }
      case "with": {
        for (const m of e.mods) {
          const v = this.termVars(m.value, safe, visible, "needed");
          if (!subset(v.needed, safe) || v.pattern.size > 0 || v.iterated.size > 0) return undefined;
        }
        const inner = this.reorder(e.body, safe, visible, false);
        if (!inner) return undefined;
        addAll(safe, inner.bound);
        return {
          ...e,
          mods: e.mods.map((m) => ({ ...m, value: this.closures(m.value, safe, visible) })),
          body: inner.body,
        };
      }
    }
  }

  /** Orders the bodies of the comprehensions inside `t`, with `safe` bound around them. */
  private closures(t: KTerm, safe: ReadonlySet<string>, visible: ReadonlySet<string>): KTerm {
    if (closuresOf(t, []).length === 0) return t;
    const map = (x: KTerm): KTerm => this.closures(x, safe, visible);
    switch (t.type) {
      case "ref":
        return { ...t, head: map(t.head), path: t.path.map(map) };
      case "array":
      case "set":
        return { ...t, items: t.items.map(map) };
      case "object":
        return { ...t, entries: t.entries.map(([k, v]) => [map(k), map(v)] as [KTerm, KTerm]) };
      case "arraycompr":
      case "setcompr": {
        const inner = this.orderClosureBody(t.body, [t.term], safe, visible, t.loc);
        return { ...t, body: inner };
      }
      case "objectcompr": {
        const inner = this.orderClosureBody(t.body, [t.key, t.value], safe, visible, t.loc);
        return { ...t, body: inner };
      }
      default:
        return t;
    }
  }

  private orderClosureBody(
    body: KBody,
    heads: KTerm[],
    safe: ReadonlySet<string>,
    visible: ReadonlySet<string>,
    loc: Location,
  ): KBody {
    const result = this.reorder(body, safe, visible);
    if (!result) return body;
    for (const head of heads) {
      const vars = varsOfTerm(head, new Set(), false);
      const missing = [...vars].filter((v) => !result.bound.has(v));
      if (missing.length > 0) {
        this.reportUnsafe([{ kind: "term", term: head, loc }], result.bound, visible);
      }
    }
    return result.body;
  }
}

function walkVarTerms(e: KExpr, visit: (t: KTerm) => void, visible: ReadonlySet<string>): void {
  const term = (t: KTerm): void => {
    switch (t.type) {
      case "var":
        visit(t);
        break;
      case "ref":
        term(t.head);
        t.path.forEach(term);
        break;
      case "array":
      case "set":
        t.items.forEach(term);
        break;
      case "object":
        for (const [k, v] of t.entries) {
          term(k);
          term(v);
        }
        break;
      default:
        break;
    }
  };
  switch (e.kind) {
    case "unify":
      term(e.left);
      term(e.right);
      break;
    case "call":
      e.args.forEach(term);
      if (e.output) term(e.output);
      break;
    case "term":
      term(e.term);
      break;
    case "not":
    case "with":
      for (const inner of e.body) walkVarTerms(inner, visit, visible);
      if (e.kind === "with") for (const m of e.mods) term(m.value);
      break;
    case "every":
      term(e.domain);
      for (const inner of e.body) walkVarTerms(inner, visit, visible);
      break;
  }
}

function subset(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

function addAll(target: Set<string>, source: Iterable<string>): void {
  for (const x of source) target.add(x);
}

function compareLoc(a: Location, b: Location): number {
  return a.line - b.line || a.col - b.col;
}
