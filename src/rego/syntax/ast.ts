/**
 * The Rego v1 abstract syntax tree. It follows OPA's `ast` package closely (Module, Rule, Head,
 * Body, Expr, Term) so that OPA's documentation and error messages map onto it, but uses
 * discriminated unions instead of Go interfaces.
 *
 * Every node carries `loc`. Two ASTs are "the same" when they are equal ignoring `loc` (and
 * `comments`); `stripLocations` in `./equality.ts` gives that view.
 */
import type { Location } from "../errors.ts";

export type { Location };

// ---------------------------------------------------------------------------------------------
// Terms

export interface NullTerm {
  type: "null";
  loc: Location;
}

export interface BooleanTerm {
  type: "boolean";
  value: boolean;
  loc: Location;
}

/**
 * A number literal. `value` is the literal's text as written (`1`, `-2.50`, `1e3`,
 * `123456789012345678901234567890`), so big and exact decimal numbers are never rounded through
 * a JavaScript double. A leading unary minus on a literal is folded into the text, even across
 * spaces (`- 1` is `-1`), and a leading dot is kept (`.5`), as OPA does.
 */
export interface NumberTerm {
  type: "number";
  value: string;
  loc: Location;
}

/** A string literal, already unescaped. Raw (backtick) strings produce the same node. */
export interface StringTerm {
  type: "string";
  value: string;
  loc: Location;
}

/** A variable. `_` is a wildcard; the compiler gives each occurrence a fresh name. */
export interface VarTerm {
  type: "var";
  name: string;
  loc: Location;
}

/**
 * A reference: `head` followed by path operands. `a.b[c]["d"]` is
 * `{head: var a, path: [string "b", var c, string "d"]}`. The head is usually a var (`data`,
 * `input`, a local, a rule name) but may be any composite or call term (`[1, 2][0]`, `f(x).y`).
 * `path` is never empty: `data` or `input` on its own is a `VarTerm` (OPA makes it a one-element
 * ref), and so is the path of `import data`.
 */
export interface RefTerm {
  type: "ref";
  head: Term;
  path: Term[];
  loc: Location;
}

export interface ArrayTerm {
  type: "array";
  items: Term[];
  loc: Location;
}

/** `{1, 2}` or `set()`. */
export interface SetTerm {
  type: "set";
  items: Term[];
  loc: Location;
}

export interface ObjectTerm {
  type: "object";
  entries: Array<[key: Term, value: Term]>;
  loc: Location;
}

export interface ArrayComprehension {
  type: "arraycompr";
  term: Term;
  body: Body;
  loc: Location;
}

export interface SetComprehension {
  type: "setcompr";
  term: Term;
  body: Body;
  loc: Location;
}

export interface ObjectComprehension {
  type: "objectcompr";
  key: Term;
  value: Term;
  body: Body;
  loc: Location;
}

/**
 * A call: a builtin, a user function, or an operator. Operators use OPA's builtin names, so
 * `x + y` is `{op: plus, args: [x, y]}`:
 *
 * | operator | name     | operator | name        |
 * |----------|----------|----------|-------------|
 * | `=`      | `eq`     | `:=`     | `assign`    |
 * | `==`     | `equal`  | `!=`     | `neq`       |
 * | `<`      | `lt`     | `<=`     | `lte`       |
 * | `>`      | `gt`     | `>=`     | `gte`       |
 * | `+`      | `plus`   | `-`      | `minus`     |
 * | `*`      | `mul`    | `/`      | `div`       |
 * | `%`      | `rem`    | `\|`     | `or`        |
 * | `&`      | `and`    |          |             |
 * | `x in xs`      | `internal.member_2` | `k, v in xs` | `internal.member_3` |
 *
 * `op` is a var (`count`) or a ref, normally with an all-string path (`object.get`,
 * `data.lib.f`); the parser, like OPA's, also accepts other refs (`x[0](1)`, `f(x).g(y)`) and
 * leaves them to the compiler. `set()` is not a call but the empty `SetTerm`.
 *
 * Unary minus on a number literal folds into the literal (`-1` is the number `-1`). OPA's grammar
 * has no unary minus on anything else: `-x` or `-f(x)` is a parse error ("unexpected identifier
 * token: expected number"), so no node represents it; write `0 - x`.
 */
export interface CallTerm {
  type: "call";
  op: VarTerm | RefTerm;
  args: Term[];
  loc: Location;
}

/**
 * A template string: `$"a{x}b"` or the raw form `` $`a{x}b` `` (`raw`). `parts` are, in order,
 * the literal text pieces (non-empty strings, already unescaped) and the expressions written
 * between braces; an expression that is just a scalar literal (`{1}`) is kept as that term, as
 * OPA does. The compiler lowers it to `internal.template_string([…])`, each expression wrapped
 * in a set comprehension so that an undefined one renders as `<undefined>`.
 */
export interface TemplateStringTerm {
  type: "templatestring";
  raw: boolean;
  parts: Array<ScalarTerm | Expr>;
  loc: Location;
}

/** Whether a template-string part is an expression (rather than a literal term). */
export function isTemplateExpr(part: ScalarTerm | Expr): part is Expr {
  return "node" in part;
}

export type ScalarTerm = NullTerm | BooleanTerm | NumberTerm | StringTerm;

export type Term =
  | ScalarTerm
  | VarTerm
  | RefTerm
  | ArrayTerm
  | SetTerm
  | ObjectTerm
  | ArrayComprehension
  | SetComprehension
  | ObjectComprehension
  | CallTerm
  | TemplateStringTerm;

export type TermType = Term["type"];

// ---------------------------------------------------------------------------------------------
// Expressions and bodies

/** `with target as value`. `target` is a ref (`input.x`, `data.a.b`) or a var naming a function. */
export interface With {
  target: VarTerm | RefTerm;
  value: Term;
  loc: Location;
}

/**
 * `some x, y` declares local variables: `symbols` are vars.
 * `some x in xs` / `some k, v in xs`: `symbols` is a single call term to `internal.member_2` or
 * `internal.member_3` (as OPA represents it).
 */
export interface SomeDecl {
  type: "some";
  symbols: Term[];
  loc: Location;
}

/** `every k, v in domain { body }` (`key` absent for `every v in domain`). */
export interface Every {
  type: "every";
  key: Term | undefined;
  value: Term;
  domain: Term;
  body: Body;
  loc: Location;
}

/** `not { a; b }`: a braced body negated as a whole (only in an Expr with `negated: true`). */
export interface NegatedBody {
  type: "body";
  body: Body;
  loc: Location;
}

/**
 * `lhs and rhs` / `lhs or rhs` (future keywords `and`, `or`). Each side is a body: one
 * expression, or several for a braced operand (`{ a; b } or c`). `and` binds tighter than `or`;
 * both are left-associative, so `a or b or c` is `(a or b) or c`.
 */
export interface LogicalExpr {
  type: "logical";
  op: "and" | "or";
  lhs: Body;
  rhs: Body;
  loc: Location;
}

/**
 * One expression of a body; `loc` is its first token (`not` when negated). `node` is:
 * - a term: a bare term (`input.admin`, `true`) or a call term (`x == 1`, `x := 2`, `count(xs)`,
 *   `f(x)`); calls at the top of an expression are "call expressions";
 * - a `some` declaration;
 * - an `every` expression;
 * - a braced body, negated as a whole (`not { a; b }`, with `import future.keywords.not`);
 * - a logical `and` / `or` of two bodies (with `import future.keywords.and` / `.or`).
 */
export interface Expr {
  negated: boolean;
  node: Term | SomeDecl | Every | NegatedBody | LogicalExpr;
  with: With[];
  loc: Location;
}

export type Body = Expr[];

// ---------------------------------------------------------------------------------------------
// Rules and modules

/**
 * A rule head. OPA 1.x "general ref heads": `ref` is the full rule reference as written,
 * relative to the package: `p`, `a.b.c`, `p[k]`, `a.b[c].d`.
 *
 * | written                     | ref      | key | value  | args | assign |
 * |-----------------------------|----------|-----|--------|------|--------|
 * | `p if {…}`                  | p        | –   | –      | –    | false  |
 * | `p := 1 if {…}` / `p := 1`  | p        | –   | 1      | –    | true   |
 * | `p = 1 if {…}`              | p        | –   | 1      | –    | false  |
 * | `p contains x if {…}`       | p        | x   | –      | –    | false  |
 * | `p[k] := v if {…}`          | p[k]     | –   | v      | –    | true   |
 * | `f(x) := y if {…}`          | f        | –   | y      | [x]  | true   |
 * | `f(x) if {…}`               | f        | –   | –      | [x]  | false  |
 *
 * A missing `value` (and missing `key`) means the implicit value `true`; the printer keeps it
 * implicit, and `assign` is then false. `args` is `[]` for `f()` and undefined for non-functions.
 * A bodyless rule without `value` is only valid for functions (`f(1)` means `f(1) := true`),
 * multi-value rules (`p contains 1`) and default rules (`default p` means `default p := true`).
 */
export interface RuleHead {
  ref: VarTerm | RefTerm;
  args: Term[] | undefined;
  key: Term | undefined;
  value: Term | undefined;
  assign: boolean;
  loc: Location;
}

/**
 * A rule. `p if { a } { b }` (one head, several bodies) is two rules with equal heads, the second
 * located at its `{`.
 */
export interface Rule {
  default: boolean;
  head: RuleHead;
  /** Empty when the rule has no body (`p := 1`, `default p := false`). */
  body: Body;
  /**
   * The next rule of an `else` chain. Its head has `ref` and `args` copied from this rule's, its
   * own `value`/`assign` (`else := 2`), and its `loc` (and the rule's) at the `else` keyword.
   */
  else: Rule | undefined;
  loc: Location;
}

export interface Package {
  /** The package path without `data`: `package a.b` is `["a", "b"]`. */
  path: string[];
  loc: Location;
}

export interface Import {
  /** The imported ref: `data.lib.util`, `input.user`, `rego.v1`, `future.keywords.in`. */
  path: VarTerm | RefTerm;
  alias: string | undefined;
  loc: Location;
}

export interface Comment {
  text: string;
  loc: Location;
}

/** JSON data, as annotations hold it. */
export type JSONValue = null | boolean | number | string | JSONValue[] | { [key: string]: JSONValue };

/** The statement a `# METADATA` block applies to. */
export type AnnotationTarget = { kind: "package" } | { kind: "import" } | { kind: "rule"; rule: Rule };

/**
 * A `# METADATA` block (OPA's `Annotations`). Optional fields are absent when not given (or
 * empty); `loc` is the `# METADATA` comment.
 */
export interface Annotation {
  scope: "rule" | "document" | "package" | "subpackages" | string;
  title?: string;
  description?: string;
  entrypoint?: boolean;
  organizations?: string[];
  related_resources?: Array<{ ref: string; description?: string }>;
  authors?: Array<{ name?: string; email?: string }>;
  /** `path`/`schema` are refs as their parts (`["input", "x"]`, `["schema", "s"]`). */
  schemas?: Array<{ path: string[]; schema?: string[]; definition?: JSONValue }>;
  custom?: { [key: string]: JSONValue };
  loc: Location;
  target: AnnotationTarget | undefined;
}

export interface Module {
  file: string;
  package: Package;
  imports: Import[];
  rules: Rule[];
  /** The module's `# METADATA` blocks, in source order, attached to their statements. */
  annotations: Annotation[];
  /** Every comment of the file, in source order; `text` is what follows the `#`. */
  comments: Comment[];
  /**
   * `0` for a module parsed as Rego v0 that does not import `rego.v1` (OPA's `RegoV0`): the
   * compiler's Rego v1 checks (deprecated builtins, shadowing `input`/`data`, duplicate imports)
   * do not apply to it. Absent when the module follows v1's rules (parsed as v1, or as v0 with
   * `import rego.v1`); its rules are the same AST either way.
   */
  regoVersion?: 0;
}
