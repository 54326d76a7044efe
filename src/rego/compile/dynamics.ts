/**
 * OPA's `RewriteDynamicTerms` stage (`rewriteDynamics` in `v1/ast/compile.go`), on ordered kernel
 * bodies: the dynamic terms of an expression (refs and comprehensions) are bound to new vars by
 * assignments placed just before it, so they are evaluated eagerly. Which terms move:
 *
 * - the arguments (and output) of a call, and the refs and comprehensions inside arrays, objects
 *   and sets among them: `f(input.x)` is `t = input.x; f(t)`;
 * - in a unification (and `==` in a module's rules, which OPA's `RewriteEquals` makes one) and in
 *   a term used as a condition, a ref stays where it is but its dynamic keys move:
 *   `p[input.name]` is `t = input.name; p[t]`;
 * - the domain of `every`.
 *
 * It is visible only under negation: the assignments of a negated expression go before its `not`,
 * so `not startswith(input.image, "corp/")` is undefined, not true, when `input.image` is. A
 * negated body (`not { … }`), comprehension and `every` bodies are rewritten within themselves.
 * `print` is left alone: OPA captures its arguments in comprehensions, so that an undefined one
 * prints `<undefined>` instead of failing the body.
 */
import type { KBody, KExpr, KRule, KTerm, KVar } from "./kernel.ts";
import type { NameSource } from "./lower.ts";

export interface DynamicsOptions {
  /**
   * `==` counts as unification (`RewriteEquals`, which runs on modules but not on queries): its
   * sides keep their refs.
   */
  equalIsUnification: boolean;
}

export class DynamicsRewriter {
  constructor(
    private readonly names: NameSource,
    private readonly options: DynamicsOptions,
  ) {}

  body(body: KBody): KBody {
    const out: KBody = [];
    for (const e of body) {
      const rewritten = this.expr(e, out);
      out.push(rewritten);
    }
    return out;
  }

  /** Rewrites one expression; what it hoists is appended to `hoisted` (placed before it). */
  private expr(e: KExpr, hoisted: KBody): KExpr {
    switch (e.kind) {
      case "unify":
        return { ...e, left: this.inTerm(e.left, hoisted), right: this.inTerm(e.right, hoisted) };
      case "call": {
        if (e.callee.kind === "builtin" && e.callee.name === "print")
          return { ...e, args: e.args.map((a) => this.closures(a)) };
        const isEquality =
          this.options.equalIsUnification &&
          e.callee.kind === "builtin" &&
          e.callee.name === "equal" &&
          e.output === undefined &&
          e.args.length === 2;
        const rewrite = (t: KTerm) => (isEquality ? this.inTerm(t, hoisted) : this.one(t, hoisted));
        const args = e.args.map(rewrite);
        return { ...e, args, output: e.output && rewrite(e.output) };
      }
      case "term":
        return { ...e, term: this.inTerm(e.term, hoisted) };
      case "not": {
        if (!e.expr) return { ...e, body: this.body(e.body) };
        // A negated expression: what its parts hoist is evaluated before the `not`.
        const body = e.body.map((inner) => this.expr(inner, hoisted));
        return { ...e, body };
      }
      case "every":
        return { ...e, domain: this.one(e.domain, hoisted), body: this.body(e.body) };
      case "with":
        return {
          ...e,
          mods: e.mods.map((m) => ({ ...m, value: this.closures(m.value) })),
          body: this.body(e.body),
        };
    }
  }

  /** `rewriteDynamicsInTerm`: a ref keeps its place (its dynamic keys move); the rest as `one`. */
  private inTerm(t: KTerm, hoisted: KBody): KTerm {
    switch (t.type) {
      case "ref":
        return { ...t, head: this.closures(t.head), path: t.path.map((p) => this.one(p, hoisted)) };
      case "arraycompr":
      case "setcompr":
      case "objectcompr":
        return this.closures(t);
      default:
        return this.one(t, hoisted);
    }
  }

  /** `rewriteDynamicsOne`: refs and comprehensions are hoisted, composites are searched. */
  private one(t: KTerm, hoisted: KBody): KTerm {
    switch (t.type) {
      case "var":
        // `input` and `data` on their own are refs in OPA.
        return t.name === "input" || t.name === "data" ? this.hoist(t, hoisted) : t;
      case "ref":
        return this.hoist(
          { ...t, head: this.closures(t.head), path: t.path.map((p) => this.one(p, hoisted)) },
          hoisted,
        );
      case "array":
      case "set":
        return { ...t, items: t.items.map((i) => this.one(i, hoisted)) };
      case "object":
        return {
          ...t,
          entries: t.entries.map(([k, v]) => [this.one(k, hoisted), this.one(v, hoisted)] as [KTerm, KTerm]),
        };
      case "arraycompr":
      case "setcompr":
      case "objectcompr":
        return this.hoist(this.closures(t), hoisted);
      default:
        return t;
    }
  }

  private hoist(t: KTerm, hoisted: KBody): KVar {
    const v: KVar = { type: "var", name: this.names.temp(), loc: t.loc };
    hoisted.push({ kind: "unify", left: v, right: t, loc: t.loc });
    return v;
  }

  /** The term with the bodies of the comprehensions in it rewritten (nothing hoisted out). */
  private closures(t: KTerm): KTerm {
    switch (t.type) {
      case "ref":
        return { ...t, head: this.closures(t.head), path: t.path.map((p) => this.closures(p)) };
      case "array":
      case "set":
        return { ...t, items: t.items.map((i) => this.closures(i)) };
      case "object":
        return {
          ...t,
          entries: t.entries.map(([k, v]) => [this.closures(k), this.closures(v)] as [KTerm, KTerm]),
        };
      case "arraycompr":
      case "setcompr":
        return { ...t, term: this.closures(t.term), body: this.body(t.body) };
      case "objectcompr":
        return { ...t, key: this.closures(t.key), value: this.closures(t.value), body: this.body(t.body) };
      default:
        return t;
    }
  }

  /** A rule's body, and the comprehensions of its head. */
  rule(rule: KRule): void {
    rule.body = this.body(rule.body);
    rule.keyPath = rule.keyPath.map((t) => this.closures(t));
    if (rule.key) rule.key = this.closures(rule.key);
    rule.value = this.closures(rule.value);
  }
}
