/**
 * The tree `opa fmt` lays out: Writ's AST reshaped into OPA's (`Ref` and `Call` as lists of
 * terms, a call expression as its terms, bodyless rules with OPA's generated `true` body,
 * `else` heads, `p[x]` keys), each node carrying the location OPA's parser gives it.
 *
 * OPA's formatter decides almost everything from locations: a node's row, and its `Text` (the
 * source it was parsed from), whose line breaks say whether a collection was written over several
 * lines, where a body's closing brace is, whether an `else` started its own line. Writ's AST keeps
 * only where a node starts, so `./spans.ts` finds where each ends from the tokens, and this module
 * reproduces OPA's choices of start and extent, quirks included: a parenthesized term's text
 * includes its parentheses, a negative number's text is its `-`, a rule made from an expression
 * (`p := 1`) shares one location between rule and head, the single expression of `else … if x`
 * and everything in it take the `else` rule's location.
 */
import type {
  Body,
  Comment,
  Expr,
  Import,
  Module,
  Rule,
  RuleHead,
  Term,
  VarTerm,
  With,
} from "../syntax/ast.ts";
import { isTemplateExpr } from "../syntax/ast.ts";
import { MEMBER_2, MEMBER_3, operatorName } from "../syntax/printer.ts";
import { type SourceTokens, Tok } from "./spans.ts";

/** OPA's `Location`: where a node starts and the source text it was parsed from. */
export interface Loc {
  row: number;
  col: number;
  offset: number;
  text: string;
}

export type Value =
  | { kind: "null" }
  | { kind: "boolean"; value: boolean }
  | { kind: "number"; text: string }
  | { kind: "string"; value: string }
  | { kind: "var"; name: string }
  | { kind: "ref"; terms: FTerm[] }
  | { kind: "array"; items: FTerm[] }
  | { kind: "set"; items: FTerm[] }
  | { kind: "object"; entries: Array<[FTerm, FTerm]> }
  | { kind: "arraycompr"; term: FTerm; body: FExpr[] }
  | { kind: "setcompr"; term: FTerm; body: FExpr[] }
  | { kind: "objectcompr"; key: FTerm; value: FTerm; body: FExpr[] }
  /** `terms[0]` is the operator, a ref (`count`, `object.get`, `plus`, `internal.member_2`). */
  | { kind: "call"; terms: FTerm[] }
  | { kind: "template"; raw: boolean; parts: Array<FTerm | FExpr> };

export interface FTerm {
  value: Value;
  loc: Loc;
}

export type ExprNode =
  | { kind: "term"; term: FTerm }
  /** A call at the top of an expression (`x == 1`, `x := f(y)`, `f(x)`): operator, operands. */
  | { kind: "call"; terms: FTerm[] }
  | { kind: "some"; symbols: FTerm[]; loc: Loc }
  | { kind: "every"; key: FTerm | undefined; value: FTerm; domain: FTerm; body: FExpr[]; loc: Loc }
  /** `not { … }` (`explicit`: written in braces) or `not (a or b)` (OPA's `Not`). */
  | { kind: "not"; body: FExpr[]; explicit: boolean; loc: Loc }
  /** `a or b` (future keywords `and`/`or`); an operand written in braces is `explicit`. */
  | {
      kind: "logical";
      op: "and" | "or";
      lhs: FExpr[];
      rhs: FExpr[];
      lhsExplicit: boolean;
      rhsExplicit: boolean;
      loc: Loc;
    };

export interface FExpr {
  negated: boolean;
  node: ExprNode;
  with: FWith[];
  loc: Loc;
}

export interface FWith {
  target: FTerm;
  value: FTerm;
  loc: Loc;
}

export interface FHead {
  /** OPA's `Head.Ref()`: the rule name and its path, or `[else]` once the writer renames it. */
  ref: FTerm[];
  isElse: boolean;
  args: FTerm[];
  /** `contains` key, or OPA's key of a `p[x]` head. */
  key: FTerm | undefined;
  /** Undefined only for `contains` heads; an implicit value is a generated `true`. */
  value: FTerm | undefined;
  assign: boolean;
  loc: Loc;
}

export interface FRule {
  default: boolean;
  head: FHead;
  /** Never empty: a bodyless rule has OPA's generated body `true`. */
  body: FExpr[];
  else: FRule | undefined;
  loc: Loc;
}

export interface FImport {
  path: FTerm;
  alias: string | undefined;
  loc: Loc;
}

export interface FPackage {
  /** The package path; the first element a var, the rest strings as written (`.b` or `["b"]`). */
  path: FTerm[];
  loc: Loc;
}

export interface FComment {
  text: string;
  loc: Loc;
}

export interface FModule {
  package: FPackage;
  imports: FImport[];
  rules: FRule[];
  comments: FComment[];
}

/** `true`, as OPA generates it for implicit values and bodies. */
export function trueTerm(loc: Loc): FTerm {
  return { value: { kind: "boolean", value: true }, loc };
}

/** OPA's generated body of a rule without one. */
function trueBody(loc: Loc): FExpr[] {
  return [{ negated: false, node: { kind: "term", term: trueTerm(loc) }, with: [], loc }];
}

const BINARY_TOKENS: ReadonlySet<number> = new Set([
  Tok.Equal,
  Tok.Neq,
  Tok.Lt,
  Tok.Gt,
  Tok.Lte,
  Tok.Gte,
  Tok.Or,
  Tok.And,
  Tok.Add,
  Tok.Sub,
  Tok.Mul,
  Tok.Quo,
  Tok.Rem,
  Tok.Assign,
  Tok.Unify,
  Tok.In,
]);

/** Builds the formatter's tree of `module`, whose source `tokens` holds. */
export function formatTree(module: Module, tokens: SourceTokens): FModule {
  return new TreeBuilder(tokens, module).build();
}

class TreeBuilder {
  private readonly tokens: SourceTokens;
  private readonly module: Module;
  /** Token index of each term's first and last token, without parentheses around it. */
  private readonly extents = new Map<Term, [number, number]>();
  /** `not` keyword imported (`future.keywords`, `future.keywords.not` or `rego.v2`): `not ( … )` is a `Not`. */
  private readonly notKeyword: boolean;
  /** Offsets at which statements start, ascending; a statement ends before the next one. */
  private readonly statementStarts: number[];

  constructor(tokens: SourceTokens, module: Module) {
    this.tokens = tokens;
    this.module = module;
    this.notKeyword = module.imports.some((imp) => {
      const parts = imp.path.type === "ref" ? [imp.path.head, ...imp.path.path] : [imp.path];
      const names = parts.map((t) => (t.type === "var" ? t.name : t.type === "string" ? t.value : ""));
      const joined = names.join(".");
      return joined === "future.keywords" || joined === "future.keywords.not" || joined === "rego.v2";
    });
    const starts = [module.package.loc.offset, ...module.imports.map((imp) => imp.loc.offset)];
    for (const rule of module.rules) starts.push(rule.loc.offset);
    this.statementStarts = [...new Set(starts)].sort((a, b) => a - b);
  }

  build(): FModule {
    const module = this.module;
    return {
      package: this.packageOf(),
      imports: module.imports.map((imp) => this.importOf(imp)),
      rules: module.rules.map((rule) => this.ruleOf(rule)),
      comments: module.comments.map((comment) => this.commentOf(comment)),
    };
  }

  // -------------------------------------------------------------------------------------------
  // Locations

  /** The location of a node starting at `offset` (a token's start) whose text ends at token `last`. */
  private locTo(at: { line: number; col: number; offset: number }, last: number): Loc {
    const text = this.tokens.source.slice(at.offset, this.tokens.end(last));
    return { row: at.line, col: at.col, offset: at.offset, text };
  }

  /** The location of the token at `index`, its text the token's. */
  private tokenLoc(index: number): Loc {
    const t = this.tokens;
    return { row: t.line(index), col: t.col(index), offset: t.start(index), text: t.text(index, index) };
  }

  /** Index of the last token of the statement starting at `offset`. */
  private statementEnd(offset: number): number {
    const next = this.statementStarts.find((start) => start > offset);
    return next === undefined ? this.tokens.lastToken() : this.tokens.indexAt(next) - 1;
  }

  private extent(term: Term): [number, number] {
    const known = this.extents.get(term);
    if (known !== undefined) return known;
    const found = this.measure(term);
    this.extents.set(term, found);
    return found;
  }

  /** The term's tokens with the grouping parentheses that directly enclose it. */
  private wrapped(term: Term): [number, number] {
    const [first, last] = this.extent(term);
    return this.tokens.parenthesized(first, last);
  }

  private measure(term: Term): [number, number] {
    const t = this.tokens;
    const first = t.indexAt(term.loc.offset);
    switch (term.type) {
      case "null":
      case "boolean":
      case "string":
      case "var":
        return [first, first];
      case "number": {
        let last = first;
        while (t.kind(last) === Tok.Sub || t.kind(last) === Tok.Dot) last++;
        return [first, last];
      }
      case "templatestring":
        return [first, t.templateEnd(first)];
      case "array":
      case "object":
      case "arraycompr":
      case "setcompr":
      case "objectcompr":
        return [first, t.closing(first)];
      case "set":
        // `set()` starts at its name.
        return [first, term.items.length === 0 ? t.closing(first + 1) : t.closing(first)];
      case "ref": {
        let last = this.wrapped(term.head)[1];
        for (let i = 0; i < term.path.length; i++) {
          const next = last + 1;
          last = t.kind(next) === Tok.LBrack ? t.closing(next) : next + 1;
        }
        return [this.wrapped(term.head)[0], last];
      }
      case "call": {
        if (this.isInfix(term)) {
          return [this.wrapped(term.args[0]!)[0], this.wrapped(term.args[term.args.length - 1]!)[1]];
        }
        const [opFirst, opLast] = this.extent(term.op);
        return [opFirst, t.closing(opLast + 1)];
      }
    }
  }

  /** Whether a call was written with an operator (`a + b`, `x in xs`, `x := 1`). */
  private isInfix(term: Term & { type: "call" }): boolean {
    return BINARY_TOKENS.has(this.tokens.kind(this.tokens.indexAt(term.op.loc.offset)));
  }

  /** OPA's location of a term: its start, and its text (see the module comment). */
  private termLoc(term: Term): Loc {
    const t = this.tokens;
    const [first, last] = this.extent(term);
    const [outerFirst, outerLast] = this.wrapped(term);
    const at = term.loc;
    if (outerFirst !== first) {
      return { row: at.line, col: at.col, offset: at.offset, text: t.text(outerFirst, outerLast) };
    }
    if (term.type === "number")
      return { row: at.line, col: at.col, offset: at.offset, text: t.text(first, first) };
    if (term.type === "ref" && isComposite(term.head)) {
      // OPA takes a ref's text from the token after its head, which for a collection is its
      // closing bracket.
      const headLast = this.extent(term.head)[1];
      return { row: at.line, col: at.col, offset: at.offset, text: t.text(headLast, last) };
    }
    return { row: at.line, col: at.col, offset: at.offset, text: t.text(first, last) };
  }

  // -------------------------------------------------------------------------------------------
  // Terms

  term(term: Term): FTerm {
    return { value: this.valueOf(term), loc: this.termLoc(term) };
  }

  private valueOf(term: Term): Value {
    switch (term.type) {
      case "null":
        return { kind: "null" };
      case "boolean":
        return { kind: "boolean", value: term.value };
      case "number":
        return { kind: "number", text: term.value };
      case "string":
        return { kind: "string", value: term.value };
      case "var":
        return { kind: "var", name: term.name };
      case "ref":
        return {
          kind: "ref",
          terms: [this.term(term.head), ...term.path.map((element) => this.term(element))],
        };
      case "array":
        return { kind: "array", items: term.items.map((item) => this.term(item)) };
      case "set":
        return { kind: "set", items: term.items.map((item) => this.term(item)) };
      case "object":
        return {
          kind: "object",
          entries: term.entries.map(([key, value]) => [this.term(key), this.term(value)]),
        };
      case "arraycompr":
        return { kind: "arraycompr", term: this.term(term.term), body: this.body(term.body) };
      case "setcompr":
        return { kind: "setcompr", term: this.term(term.term), body: this.body(term.body) };
      case "objectcompr":
        return {
          kind: "objectcompr",
          key: this.term(term.key),
          value: this.term(term.value),
          body: this.body(term.body),
        };
      case "call":
        return { kind: "call", terms: [this.operator(term), ...term.args.map((arg) => this.term(arg))] };
      case "templatestring":
        return {
          kind: "template",
          raw: term.raw,
          parts: term.parts.map((part) => (isTemplateExpr(part) ? this.expr(part) : this.term(part))),
        };
    }
  }

  /**
   * A call's operator as OPA keeps it: a ref (`count` is the ref `[count]`), located at the
   * operator token for infix calls and spanning the written name for `f(x)`.
   */
  private operator(call: Term & { type: "call" }): FTerm {
    const op = call.op;
    const name = operatorName(op) ?? "";
    if (this.isInfix(call)) {
      const loc = this.tokenLoc(this.tokens.indexAt(op.loc.offset));
      if (name === MEMBER_2 || name === MEMBER_3) {
        const member = name === MEMBER_2 ? "member_2" : "member_3";
        const terms: FTerm[] = [
          { value: { kind: "var", name: "internal" }, loc },
          { value: { kind: "string", value: member }, loc },
        ];
        return { value: { kind: "ref", terms }, loc };
      }
      return { value: { kind: "ref", terms: [{ value: { kind: "var", name }, loc }] }, loc };
    }
    const [first, last] = this.extent(op);
    const loc: Loc = {
      row: op.loc.line,
      col: op.loc.col,
      offset: op.loc.offset,
      text: this.tokens.text(first, last),
    };
    if (op.type === "var")
      return { value: { kind: "ref", terms: [{ value: { kind: "var", name: op.name }, loc }] }, loc };
    const ref = this.term(op);
    return { value: ref.value, loc };
  }

  // -------------------------------------------------------------------------------------------
  // Expressions

  body(body: Body): FExpr[] {
    return body.map((expr) => this.expr(expr));
  }

  private expr(expr: Expr): FExpr {
    const loc = this.locTo(expr.loc, this.exprEnd(expr));
    const withs = expr.with.map((w) => this.with(w));
    const group = this.negatedGroup(expr);
    if (group !== undefined) {
      // With the `not` keyword, OPA reads `not (x)` as a `Not` whose body is `x`.
      const [first, last] = group;
      const inner: FExpr = {
        negated: false,
        node: this.exprNode(expr, loc),
        with: [],
        loc: this.locTo(
          { line: this.tokens.line(first), col: this.tokens.col(first), offset: this.tokens.start(first) },
          last,
        ),
      };
      return { negated: false, node: { kind: "not", body: [inner], explicit: false, loc }, with: withs, loc };
    }
    return {
      // OPA's `Not` carries the negation itself: its expression is not negated.
      negated: expr.negated && expr.node.type !== "body",
      node: this.exprNode(expr, loc),
      with: withs,
      loc,
    };
  }

  /**
   * The tokens inside the parentheses of `not (…)` when the `not` keyword is imported and they
   * enclose the whole negated term.
   */
  private negatedGroup(expr: Expr): [number, number] | undefined {
    const node = expr.node;
    if (
      !expr.negated ||
      !this.notKeyword ||
      node.type === "body" ||
      node.type === "some" ||
      node.type === "every"
    ) {
      return undefined;
    }
    if (node.type === "logical") return undefined;
    const t = this.tokens;
    const open = t.indexAt(expr.loc.offset) + 1;
    const end = this.wrapped(node)[1];
    if (t.kind(open) !== Tok.LParen || t.closing(open) !== end) return undefined;
    return [open + 1, end - 1];
  }

  private exprNode(expr: Expr, loc: Loc): ExprNode {
    const node = expr.node;
    switch (node.type) {
      case "some":
        return {
          kind: "some",
          symbols: node.symbols.map((symbol) => this.term(symbol)),
          loc: this.someLoc(expr),
        };
      case "every":
        return {
          kind: "every",
          key: node.key && this.term(node.key),
          value: this.term(node.value),
          domain: this.term(node.domain),
          body: this.body(node.body),
          loc,
        };
      case "body": {
        const t = this.tokens;
        const explicit = t.kind(t.indexAt(expr.loc.offset) + 1) === Tok.LBrace;
        return { kind: "not", body: this.body(node.body), explicit, loc };
      }
      case "logical":
        return {
          kind: "logical",
          op: node.op,
          lhs: this.body(node.lhs),
          rhs: this.body(node.rhs),
          lhsExplicit: this.bracedOperand(node.lhs, expr.loc.offset, false),
          rhsExplicit: this.bracedOperand(node.rhs, expr.loc.offset, true),
          loc,
        };
      case "call":
        return { kind: "call", terms: [this.operator(node), ...node.args.map((arg) => this.term(arg))] };
      default:
        return { kind: "term", term: this.term(node) };
    }
  }

  /**
   * Whether an operand of `and`/`or` was written in braces: a `{` right before its first
   * expression, after the operator (right operand) or where the chain starts (left operand).
   */
  private bracedOperand(operand: Body, chainStart: number, isRhs: boolean): boolean {
    const t = this.tokens;
    const first = operand[0];
    if (first === undefined) return true;
    const brace = t.indexAt(first.loc.offset) - 1;
    if (t.kind(brace) !== Tok.LBrace) return false;
    if (!isRhs) return t.start(brace) >= chainStart;
    const word = t.text(brace - 1, brace - 1);
    return t.start(brace) > chainStart && (word === "or" || word === "and");
  }

  /** `some`'s own location: the keyword, its text OPA's token text. */
  private someLoc(expr: Expr): Loc {
    return this.tokenLoc(this.tokens.indexAt(expr.loc.offset));
  }

  private with(w: With): FWith {
    return {
      target: this.term(w.target),
      value: this.term(w.value),
      loc: this.locTo(w.loc, this.wrapped(w.value)[1]),
    };
  }

  /** Index of an expression's last token, its `with` modifiers included. */
  private exprEnd(expr: Expr): number {
    const t = this.tokens;
    const lastWith = expr.with[expr.with.length - 1];
    if (lastWith !== undefined) return this.wrapped(lastWith.value)[1];
    const node = expr.node;
    switch (node.type) {
      case "some": {
        const last = node.symbols[node.symbols.length - 1]!;
        return this.wrapped(last)[1];
      }
      case "every":
        return t.closing(this.wrapped(node.domain)[1] + 1);
      case "body":
        // `not {` or `not (`: the bracket after the keyword closes it.
        return t.closing(t.indexAt(node.loc.offset) + 1);
      case "logical":
        return this.logicalEnd(expr);
      default:
        return this.wrapped(node)[1];
    }
  }

  /** The end of `a or b`: its last operand's, and the brackets it closes that opened inside it. */
  private logicalEnd(expr: Expr): number {
    const t = this.tokens;
    let last = expr.loc.offset;
    let node = expr.node;
    let end = t.indexAt(last);
    while (node.type === "logical") {
      const operand = node.rhs[node.rhs.length - 1]!;
      end = this.exprEnd(operand);
      last = operand.loc.offset;
      node = operand.node;
    }
    const first = t.indexAt(expr.loc.offset);
    while (
      (t.kind(end + 1) === Tok.RBrace || t.kind(end + 1) === Tok.RParen) &&
      t.opening(end + 1) >= first
    ) {
      end++;
    }
    return end;
  }

  // -------------------------------------------------------------------------------------------
  // Rules

  private ruleOf(rule: Rule): FRule {
    const end = this.statementEnd(rule.loc.offset);
    if (rule.default) return this.defaultRule(rule);
    if (rule.body.length === 0) {
      return rule.head.key === undefined ? this.expressionRule(rule, end) : this.containsRule(rule);
    }
    const loc = this.locTo(rule.loc, end);
    const head = this.head(rule.head, true);
    if (this.isChained(rule)) relocateHead(head, loc);
    return {
      default: false,
      head,
      body: this.body(rule.body),
      else: rule.else && this.elseRule(rule.else, end),
      loc,
    };
  }

  /** Whether `rule` is the second or later body of `p if { … } { … }` (located at its `{`). */
  private isChained(rule: Rule): boolean {
    return this.tokens.kind(this.tokens.indexAt(rule.loc.offset)) === Tok.LBrace;
  }

  /** `default p := v`: located at `default`, with OPA's text of that one token. */
  private defaultRule(rule: Rule): FRule {
    const loc = this.tokenLoc(this.tokens.indexAt(rule.loc.offset));
    return { default: true, head: this.head(rule.head, false), body: trueBody(loc), else: undefined, loc };
  }

  /** `p contains x` without a body: OPA locates the rule at its head. */
  private containsRule(rule: Rule): FRule {
    const head = this.head(rule.head, false);
    return { default: false, head, body: trueBody(head.loc), else: undefined, loc: head.loc };
  }

  /**
   * A rule OPA reads as an expression first (`p := 1`, `a.b[c] = d`, `f(x) := y`, `f(x)`): rule
   * and head share the expression's location, and a two-part ref head gets a key.
   */
  private expressionRule(rule: Rule, end: number): FRule {
    const source = rule.head;
    if (source.value === undefined) {
      // `f(x)`: located at the operator, its value `true` sharing that location.
      const [first, last] = this.extent(source.ref);
      const loc: Loc = {
        row: source.ref.loc.line,
        col: source.ref.loc.col,
        offset: source.ref.loc.offset,
        text: this.tokens.text(first, last),
      };
      const head: FHead = {
        ref: this.refTerms(source.ref),
        isElse: false,
        args: (source.args ?? []).map((arg) => this.term(arg)),
        key: undefined,
        value: trueTerm(loc),
        assign: false,
        loc,
      };
      return { default: false, head, body: trueBody(loc), else: undefined, loc };
    }
    const loc = this.locTo(rule.loc, end);
    const ref = this.refTerms(source.ref);
    const value = this.term(source.value);
    const key = source.args === undefined && ref.length === 2 ? ref[1] : undefined;
    const head: FHead = {
      ref,
      isElse: false,
      args: (source.args ?? []).map((arg) => this.term(arg)),
      key,
      value,
      assign: source.assign,
      loc,
    };
    return { default: false, head, body: trueBody(value.loc), else: undefined, loc };
  }

  /**
   * A head parsed by OPA's `parseHead`: located at the name, its text up to the value. In a rule
   * with a body, a two-part head `p[x]` has OPA's key `x` when `x` is not a constant (or is a
   * ref), and without a written value gets a `true` located at the head itself; any other
   * implicit value is a `true` located apart.
   */
  private head(source: RuleHead, hasBody: boolean): FHead {
    const loc = this.locTo(source.loc, this.headEnd(source));
    const ref = this.refTerms(source.ref);
    const noArgs = source.args === undefined || source.args.length === 0;
    let key = source.key && this.term(source.key);
    let value = source.value && this.term(source.value);
    const second = source.ref.type === "ref" && source.ref.path.length === 1 ? source.ref.path[0] : undefined;
    if (hasBody && second !== undefined && source.key === undefined && noArgs) {
      if (!isGround(second) || second.type === "ref") key = ref[1];
      value ??= trueTerm(loc);
    }
    if (value === undefined && source.key === undefined) value = trueTerm({ ...loc });
    const args = (source.args ?? []).map((arg) => this.term(arg));
    return { ref, isElse: false, args, key, value, assign: source.assign, loc };
  }

  private headEnd(head: RuleHead): number {
    if (head.value !== undefined) return this.wrapped(head.value)[1];
    if (head.key !== undefined) return this.wrapped(head.key)[1];
    const refLast = this.extent(head.ref)[1];
    if (head.args !== undefined) return this.tokens.closing(refLast + 1);
    return refLast;
  }

  private refTerms(ref: VarTerm | Term): FTerm[] {
    if (ref.type === "ref") return [this.term(ref.head), ...ref.path.map((element) => this.term(element))];
    return [this.term(ref)];
  }

  /**
   * An `else` rule: located at `else`, its text to the end of the statement. A body written
   * without braces (`else := 1 if x`) and the generated body of `else := 1` take that location,
   * every node of them (OPA's `setLocRecursive`).
   */
  private elseRule(rule: Rule, end: number): FRule {
    const t = this.tokens;
    const elseToken = t.indexAt(rule.loc.offset);
    const loc = this.locTo(rule.loc, end);
    const value = rule.head.value && this.term(rule.head.value);
    const headLoc =
      rule.head.value === undefined
        ? this.tokenLoc(elseToken)
        : this.locTo(rule.head.loc, this.wrapped(rule.head.value)[1]);
    const head: FHead = {
      ref: this.refTerms(rule.head.ref),
      isElse: false,
      args: [],
      key: undefined,
      value: value ?? trueTerm(headLoc),
      assign: rule.head.assign,
      loc: headLoc,
    };
    let body: FExpr[];
    const first = rule.body[0];
    if (first === undefined) {
      body = trueBody(loc);
    } else {
      body = this.body(rule.body);
      if (t.kind(t.indexAt(first.loc.offset) - 1) !== Tok.LBrace)
        for (const expr of body) relocateExpr(expr, loc);
    }
    return { default: false, head, body, else: rule.else && this.elseRule(rule.else, end), loc };
  }

  // -------------------------------------------------------------------------------------------
  // Package, imports, comments

  private packageOf(): FPackage {
    const t = this.tokens;
    const pkg = this.module.package;
    const keyword = t.indexAt(pkg.loc.offset);
    const [first, ...rest] = pkg.path;
    let index = keyword + 1;
    const path: FTerm[] = [{ value: { kind: "var", name: first ?? "" }, loc: this.tokenLoc(index) }];
    index++;
    for (const name of rest) {
      const bracketed = t.kind(index) === Tok.LBrack;
      path.push({ value: { kind: "string", value: name }, loc: this.tokenLoc(index + 1) });
      index += bracketed ? 3 : 2;
    }
    return { path, loc: this.tokenLoc(keyword) };
  }

  private importOf(imp: Import): FImport {
    const path = this.term(imp.path);
    const value: Value = path.value.kind === "var" ? { kind: "ref", terms: [path] } : path.value;
    return {
      path: { value, loc: path.loc },
      alias: imp.alias,
      loc: this.tokenLoc(this.tokens.indexAt(imp.loc.offset)),
    };
  }

  private commentOf(comment: Comment): FComment {
    const loc = comment.loc;
    return {
      text: comment.text,
      loc: { row: loc.line, col: loc.col, offset: loc.offset, text: `#${comment.text}` },
    };
  }
}

function isComposite(term: Term): boolean {
  switch (term.type) {
    case "array":
    case "object":
    case "set":
    case "arraycompr":
    case "setcompr":
    case "objectcompr":
      return true;
    default:
      return false;
  }
}

/** OPA's `IsGround`: no variables anywhere. */
function isGround(term: Term): boolean {
  switch (term.type) {
    case "null":
    case "boolean":
    case "number":
    case "string":
      return true;
    case "array":
    case "set":
      return term.items.every(isGround);
    case "object":
      return term.entries.every(([key, value]) => isGround(key) && isGround(value));
    case "ref":
      return isGround(term.head) && term.path.every(isGround);
    case "call":
      return isGround(term.op) && term.args.every(isGround);
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------------
// OPA's setLocRecursive: every node below takes one location.

function relocateHead(head: FHead, loc: Loc): void {
  head.loc = loc;
  for (const term of head.ref) relocateTerm(term, loc);
  for (const term of head.args) relocateTerm(term, loc);
  if (head.key) relocateTerm(head.key, loc);
  if (head.value) relocateTerm(head.value, loc);
}

export function relocateExpr(expr: FExpr, loc: Loc): void {
  expr.loc = loc;
  const node = expr.node;
  switch (node.kind) {
    case "term":
      relocateTerm(node.term, loc);
      break;
    case "call":
      for (const term of node.terms) relocateTerm(term, loc);
      break;
    case "some":
      node.loc = loc;
      for (const term of node.symbols) relocateTerm(term, loc);
      break;
    case "every":
      node.loc = loc;
      if (node.key) relocateTerm(node.key, loc);
      relocateTerm(node.value, loc);
      relocateTerm(node.domain, loc);
      for (const e of node.body) relocateExpr(e, loc);
      break;
    case "not":
      node.loc = loc;
      for (const e of node.body) relocateExpr(e, loc);
      break;
    case "logical":
      node.loc = loc;
      for (const e of node.lhs) relocateExpr(e, loc);
      for (const e of node.rhs) relocateExpr(e, loc);
      break;
  }
  for (const w of expr.with) {
    w.loc = loc;
    relocateTerm(w.target, loc);
    relocateTerm(w.value, loc);
  }
}

function relocateTerm(term: FTerm, loc: Loc): void {
  term.loc = loc;
  const value = term.value;
  switch (value.kind) {
    case "ref":
    case "call":
      for (const t of value.terms) relocateTerm(t, loc);
      break;
    case "array":
    case "set":
      for (const t of value.items) relocateTerm(t, loc);
      break;
    case "object":
      for (const [k, v] of value.entries) {
        relocateTerm(k, loc);
        relocateTerm(v, loc);
      }
      break;
    case "arraycompr":
    case "setcompr":
      relocateTerm(value.term, loc);
      for (const e of value.body) relocateExpr(e, loc);
      break;
    case "objectcompr":
      relocateTerm(value.key, loc);
      relocateTerm(value.value, loc);
      for (const e of value.body) relocateExpr(e, loc);
      break;
    case "template":
      for (const part of value.parts) {
        if ("node" in part) relocateExpr(part, loc);
        else relocateTerm(part, loc);
      }
      break;
    default:
      break;
  }
}
