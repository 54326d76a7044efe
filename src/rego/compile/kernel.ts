/**
 * The kernel language: what the compile stage hands to the planner. It is Rego with everything
 * that needs name resolution or ordering already decided:
 *
 * - every var is a local of the rule (renamed where `:=`, `some` or a wildcard made it unique) or
 *   one of the roots `input` / `data`; references to rules and imports are `data` refs;
 * - calls appear only as `call` expressions, never nested inside terms (nested calls were lifted
 *   into temporaries in front of the expression that used them);
 * - bodies are ordered so that every var is bound before it is read (safety), and unification of
 *   composites of the same shape is split into element-wise unifications;
 * - `not` and `with` wrap the expressions they govern, including any lifted temporaries.
 */
import type { Location } from "../errors.ts";

export type KScalar =
  | { type: "null"; loc: Location }
  | { type: "boolean"; value: boolean; loc: Location }
  | { type: "number"; value: string; loc: Location }
  | { type: "string"; value: string; loc: Location };

export interface KVar {
  type: "var";
  name: string;
  loc: Location;
}

export interface KRef {
  type: "ref";
  head: KTerm;
  path: KTerm[];
  loc: Location;
}

export type KTerm =
  | KScalar
  | KVar
  | KRef
  | { type: "array"; items: KTerm[]; loc: Location }
  | { type: "set"; items: KTerm[]; loc: Location }
  | { type: "object"; entries: Array<[KTerm, KTerm]>; loc: Location }
  | { type: "arraycompr"; term: KTerm; body: KBody; loc: Location }
  | { type: "setcompr"; term: KTerm; body: KBody; loc: Location }
  | { type: "objectcompr"; key: KTerm; value: KTerm; body: KBody; loc: Location };

/** What a call invokes: a builtin by name, or a user function by its full data path. */
export type KCallee = { kind: "builtin"; name: string } | { kind: "function"; path: string[] };

export interface KWith {
  /** `input…` or `data…` path, or a function/builtin being replaced. */
  target:
    | { kind: "input"; path: string[] }
    | { kind: "data"; path: string[] }
    | { kind: "callee"; callee: KCallee };
  /** The replacement value (for a callee target: the value every call returns). */
  value: KTerm;
  /** For a callee target replaced by another function or builtin (`with count as my_count`). */
  replacement: KCallee | undefined;
  loc: Location;
}

export type KExpr =
  /** `left = right`: unify, binding whichever side has unbound vars. */
  | { kind: "unify"; left: KTerm; right: KTerm; loc: Location }
  /**
   * A call. With `output`, the result is unified with it; without, the result must be defined
   * and not `false` (a call used as a condition).
   */
  | { kind: "call"; callee: KCallee; args: KTerm[]; output: KTerm | undefined; loc: Location }
  /** A term used as a condition: defined and not `false`. Refs in it may iterate. */
  | { kind: "term"; term: KTerm; loc: Location }
  /**
   * `not …`: succeeds when the body is undefined. `expr` tells a negated expression (`not f(x)`,
   * whose dynamic terms OPA evaluates before the `not`: see `dynamics.ts`) from a negated body
   * (`not { … }`, and the negations the compiler makes), which keeps them inside.
   */
  | { kind: "not"; body: KBody; loc: Location; expr: boolean }
  /** `every key, value in domain { body }` (`key` may be a generated var). */
  | { kind: "every"; key: KVar; value: KTerm; domain: KTerm; body: KBody; loc: Location }
  /** `… with target as value`: the body runs with the replacements in place. */
  | { kind: "with"; mods: KWith[]; body: KBody; loc: Location };

export type KBody = KExpr[];

export type RuleKind = "complete" | "multivalue" | "object" | "function";

/** One rule after compilation. Else-chains are kept in order in `chain`. */
export interface KRule {
  kind: RuleKind;
  /** Full data path of the document the rule defines (its ground prefix). */
  path: string[];
  /** For `object` rules: the non-ground rest of the head ref (`p[k].x := v` → `[k, "x"]`). */
  keyPath: KTerm[];
  /**
   * The element a `contains` rule adds: for `multivalue` rules to the set at `path`, for `object`
   * rules (`p[q].r contains s`) to the set at `keyPath`.
   */
  key: KTerm | undefined;
  value: KTerm;
  args: KTerm[];
  body: KBody;
  default: boolean;
  /** Following `else` rules; each is evaluated only when all before it are undefined. */
  chain: KRule[];
  loc: Location;
  /** Source file, for runtime error messages. */
  file: string;
}

/** All rules that define one document path, and the kind they agree on. */
export interface RuleGroup {
  path: string[];
  kind: RuleKind;
  rules: KRule[];
  defaultRule: KRule | undefined;
  arity: number;
}

export interface KQuery {
  name: string;
  body: KBody;
  /** The user-visible vars of the query, bound in each result: source name and kernel var. */
  outputs: Array<{ name: string; var: string }>;
}

export interface CompiledPolicy {
  /** Keyed by the path joined with "/". */
  groups: Map<string, RuleGroup>;
  /** Package paths of every module: a package is a document (`{}` when nothing defines it). */
  packages: string[][];
  queries: KQuery[];
}
