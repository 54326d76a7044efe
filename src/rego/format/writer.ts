/**
 * Lays out a module as `opa fmt` does (OPA's `format.AstWithOpts` for Rego v1), rule for rule,
 * so that a file `opa fmt` wrote is written back unchanged. Comments travel with the rows they
 * were on; what was on one line stays on one line, and a collection, call or comprehension whose
 * elements were on several lines gets one line per source line, each ending with a comma.
 *
 * OPA's writer threads the not-yet-written comments through every call and answers each with
 * what is left and maybe an error. "Unexpected comment" (a second comment for a line that already
 * has one) is the error that matters: the enclosing term is then written as it was in the
 * source. This port keeps that shape (`Step`), because which comments survive such a fallback
 * is part of OPA's output.
 */
import { goQuote } from "./go-quote.ts";
import { compareImports, groupImports, pathParts } from "./imports.ts";
import {
  breaksLine,
  flattenLogical,
  isLogical,
  type LogicalNode,
  type LogicalOperand,
  notBodyNeedsParens,
} from "./logical.ts";
import {
  INFIX,
  infixLead,
  isSetTerm,
  isTrue,
  isTrueBody,
  isUnionCall,
  isUnionExpr,
  operatorName,
  termString,
  VAR_COMPATIBLE,
} from "./operators.ts";
import { closingLoc, compareLocs, exprTermsEndRow, newlines, partitionComments } from "./rows.ts";
import type { FComment, FExpr, FHead, FImport, FModule, FRule, FTerm, FWith, Loc } from "./tree.ts";

/** A comment on a line that already has one: the enclosing term is copied from the source. */
class UnexpectedComment {
  readonly unexpected = true;
}

/** Anything else that makes OPA refuse to format (an operator called with the wrong arity). */
export class FormatProblem {
  readonly unexpected = false;
  readonly message: string;
  readonly loc: Loc | undefined;
  constructor(message: string, loc?: Loc) {
    this.message = message;
    this.loc = loc;
  }
}

type WriteError = UnexpectedComment | FormatProblem;
type Step = [FComment[], WriteError | undefined];

function isUnexpected(error: WriteError | undefined): error is UnexpectedComment {
  return error?.unexpected === true;
}

/** Rego v0's keywords; v1 adds `if`, `contains`, `in` and `every`. */
const KEYWORDS_V0: ReadonlySet<string> = new Set([
  "not",
  "package",
  "import",
  "as",
  "default",
  "else",
  "with",
  "null",
  "true",
  "false",
  "some",
]);
/** Rego v1's keywords: a ref operand spelled as one is kept in brackets if written so. */
const KEYWORDS_V1: ReadonlySet<string> = new Set([...KEYWORDS_V0, "if", "contains", "in", "every"]);

/** Formats `module`; throws `FormatProblem` when OPA would refuse to. */
export function writeModule(module: FModule): string {
  const writer = new Writer(module);
  writer.module(module);
  if (writer.errors.length > 0) throw writer.errors[0];
  return squashTrailingNewlines(writer.buffer);
}

function squashTrailingNewlines(text: string): string {
  return text.endsWith("\n") ? `${text.replace(/\n+$/, "")}\n` : text;
}

type Element = FTerm | [FTerm, FTerm] | FExpr;
type EntryWriter = (element: Element, comments: FComment[]) => Step;

function elementLoc(element: Element): Loc {
  return Array.isArray(element) ? element[0].loc : element.loc;
}

class Writer {
  buffer = "";
  readonly errors: FormatProblem[] = [];
  private level = 0;
  private inline = false;
  private beforeEnd: FComment | undefined;
  private delay = false;
  private writeCommentOnFinalLine = false;
  /** An expression to wrap in parentheses when written (set for `not { x | y }`). */
  private parenExpr: FExpr | undefined;
  /** A term wrapped in parentheses when written (a leading `x | y` operand). */
  private parenTerm: FTerm | undefined;
  /** Rego v1's keywords and those imported from `future.keywords`. */
  private readonly keywords: ReadonlySet<string>;
  /** OPA's `refHeads`: some rule needs a general ref head, so every head is written as a ref. */
  private readonly refHeads: boolean;

  constructor(module: FModule) {
    const imported = module.imports
      .map((imp) => pathParts(imp.path))
      .filter((parts) => parts.length === 3 && parts[0] === "future" && parts[1] === "keywords")
      .map((parts) => parts[2]!);
    this.keywords = new Set([...KEYWORDS_V1, ...imported]);
    this.refHeads = module.rules.some((rule) => {
      const length = rule.head.ref.length;
      return length > 2 || (length === 2 && rule.head.key !== undefined && rule.head.value === undefined);
    });
  }

  // -------------------------------------------------------------------------------------------
  // Module, package, imports

  module(module: FModule): void {
    const comments = module.comments
      .map((c) => ({ text: c.text.trimEnd(), loc: c.loc }))
      .sort((a, b) => compareLocs(a.loc, b.loc));
    type Statement = { kind: "import"; imp: FImport } | { kind: "rule"; rule: FRule };
    const others: Statement[] = [
      ...module.imports.map((imp): Statement => ({ kind: "import", imp })),
      ...module.rules.map((rule): Statement => ({ kind: "rule", rule })),
    ].sort((a, b) =>
      compareLocs(a.kind === "import" ? a.imp.loc : a.rule.loc, b.kind === "import" ? b.imp.loc : b.rule.loc),
    );

    let rest = this.package(module, comments);
    let i = 0;
    while (i < others.length) {
      const imports: FImport[] = [];
      for (let s = others[i]; s?.kind === "import"; s = others[++i]) imports.push(s.imp);
      rest = this.imports(imports, rest);
      const rules: FRule[] = [];
      for (let s = others[i]; s?.kind === "rule"; s = others[++i]) rules.push(s.rule);
      rest = this.rules(rules, rest);
    }
    rest.forEach((comment, index) => {
      this.writeLine(commentText(comment));
      if (index === rest.length - 1) this.write("\n");
    });
  }

  private package(module: FModule, comments: FComment[]): FComment[] {
    const [rest] = this.insertComments(comments, module.package.loc);
    this.startLine();
    this.write("package ");
    this.writeRef(module.package.path, []);
    this.blankLine();
    return rest;
  }

  private imports(imports: FImport[], comments: FComment[]): FComment[] {
    const onSameRow = new Map<FImport, FComment>();
    let rest: FComment[] = [];
    for (const comment of comments) {
      const imp = imports.find((candidate) => candidate.loc.row === comment.loc.row);
      if (imp === undefined) rest.push(comment);
      else onSameRow.set(imp, comment);
    }
    for (const group of groupImports(imports)) {
      [rest] = this.insertComments(rest, group[0]!.loc);
      for (const imp of [...group].sort(compareImports)) {
        this.startLine();
        this.write("import ");
        // OPA writes `future.keywords.in` with a writer that knows only v0's keywords.
        const terms = imp.path.value.kind === "ref" ? imp.path.value.terms : [imp.path];
        this.writeRef(terms, [], pathParts(imp.path)[0] === "future" ? KEYWORDS_V0 : this.keywords);
        if (imp.alias !== undefined) this.write(` as ${imp.alias}`);
        const comment = onSameRow.get(imp);
        if (comment !== undefined) this.write(` ${commentText(comment)}`);
        this.endLine();
      }
      this.blankLine();
    }
    return rest;
  }

  // -------------------------------------------------------------------------------------------
  // Rules

  private rules(rules: FRule[], comments: FComment[]): FComment[] {
    let rest = comments;
    rules.forEach((rule, i) => {
      let error: WriteError | undefined;
      [rest, error] = this.insertComments(rest, rule.loc);
      this.record(error);
      [rest, error] = this.rule(rule, false, rest);
      this.record(error);
      const next = rules[i + 1];
      if (
        next !== undefined &&
        this.groupableOneLiner(rule) &&
        this.groupableOneLiner(next) &&
        next.loc.row === rule.loc.row + 1
      ) {
        return;
      }
      this.blankLine();
    });
    return rest;
  }

  private record(error: WriteError | undefined): void {
    if (error instanceof FormatProblem) this.errors.push(error);
  }

  /** Whether a rule is written on one line, so it may stay next to an adjacent one. */
  private groupableOneLiner(rule: FRule): boolean {
    if (rule.body.length > 1 || rule.default || rule.else !== undefined) return false;
    // A lone set term keeps the braces of its body, over several lines.
    return !(rule.body.length === 1 && isSetTerm(rule.body[0]!));
  }

  private rule(rule: FRule, isElse: boolean, comments: FComment[]): Step {
    if (!isElse) this.startLine();
    if (rule.default) this.write("default ");
    // A rule without a body has the generated body `true`; OPA keeps such rules bodyless.
    const isExpandedConst = isTrueBody(rule.body) && rule.else === undefined;
    this.writeCommentOnFinalLine = isExpandedConst;

    let unexpectedComment = false;
    let [rest, error] = this.head(rule.head, rule.default, isExpandedConst, comments);
    if (error !== undefined) {
      if (!isUnexpected(error)) return [[], error];
      unexpectedComment = true;
    }
    if (rule.body.length === 0 || isExpandedConst) {
      this.endLine();
      return [rest, undefined];
    }
    this.writeCommentOnFinalLine = true;
    this.write(" if");
    const first = rule.body[0]!;
    if (rule.body.length === 1) {
      // One expression on the row where the head ends is written after `if`, without braces.
      const headEndRow = rule.head.loc.row + newlines(rule.head.loc.text);
      if (first.loc.row === headEndRow && !isSetTerm(first)) {
        this.write(" ");
        [rest, error] = this.expr(first, rest);
        if (error !== undefined) return [[], error];
        this.endLine();
        if (rule.else !== undefined) {
          [rest, error] = this.else(rule, rest);
          if (error !== undefined) return [[], error];
        }
        return [rest, undefined];
      }
    }
    if (unexpectedComment && rest.length > 0) {
      this.write(" { ");
    } else {
      this.write(" {");
      this.endLine();
    }
    // A leading `x | y` would read as a comprehension at the brace of `p if { … }`.
    if (!isElse) this.markUnionLead(first);
    this.up();
    [rest, error] = this.body(rule.body, rest);
    if (error !== undefined && !isUnexpected(error)) return [[], error];

    let close: Loc;
    if (rule.head.args.length > 0) close = closingLoc("(", ")", "{", "}", rule.loc);
    else if (rule.head.key !== undefined) close = closingLoc("[", "]", "{", "}", rule.loc);
    else close = closingLoc("", "", "{", "}", rule.loc);
    [rest, error] = this.insertComments(rest, close);
    if (error !== undefined) return [[], error];
    this.down();
    this.startLine();
    this.write("}");
    if (rule.else !== undefined) {
      [rest, error] = this.else(rule, rest);
      if (error !== undefined) return [[], error];
    }
    return [rest, undefined];
  }

  /**
   * `else` on the line of the closing brace if it was written there, otherwise (or after a
   * comment) on a line of its own after a blank line.
   */
  private else(rule: FRule, comments: FComment[]): Step {
    const next = rule.else!;
    let wasInline = false;
    const ruleLines = rule.loc.text.split("\n");
    const relativeElseRow = next.loc.row - rule.loc.row;
    if (relativeElseRow > 0 && relativeElseRow < ruleLines.length) {
      if (!ruleLines[relativeElseRow]!.trim().startsWith("else")) wasInline = true;
    }
    const first = comments[0];
    const hasCommentAbove =
      (first !== undefined && first.loc.row - next.head.loc.row < 0) || this.beforeEnd !== undefined;
    if (!hasCommentAbove && wasInline) {
      this.write(" ");
    } else {
      this.blankLine();
      this.startLine();
    }
    const head = next.head;
    head.isElse = true;
    head.ref = [{ value: { kind: "var", name: "else" }, loc: head.loc }];
    head.args = [];
    const [rest, error] = this.insertComments(comments, head.loc);
    if (error !== undefined) return [[], error];
    if (hasCommentAbove && !wasInline) this.startLine();
    if (head.value !== undefined) head.value = { ...head.value, loc: head.loc };
    return this.rule(next, true, rest);
  }

  private head(head: FHead, isDefault: boolean, isExpandedConst: boolean, comments: FComment[]): Step {
    let rest = comments;
    let error: WriteError | undefined;
    const ref = head.ref;
    if (this.refHeads || ref.length === 1) {
      [rest, error] = this.writeRef(ref, rest);
      if (error !== undefined) return [[], error];
    } else {
      // A comment inside the head's brackets: OPA leaves the head as written.
      const firstComment = rest[0];
      if (firstComment !== undefined && ref[1]!.loc.row === firstComment.loc.row) {
        return this.writeUnformatted(head.loc, rest);
      }
      this.write(termString(ref[0]!));
      this.write("[");
      this.write(termString(ref[1]!));
      this.write("]");
    }
    if (head.args.length > 0) {
      this.write("(");
      [rest, error] = this.iterable(
        head.args,
        head.loc,
        closingLoc("", "", "(", ")", head.loc),
        rest,
        this.listWriter(false),
      );
      this.write(")");
      if (error !== undefined) return [rest, error];
    }
    if (head.key !== undefined) {
      if (head.value === undefined) {
        this.write(" contains ");
        [rest, error] = this.term(head.key, rest);
        if (error !== undefined) return [rest, error];
      }
    }
    const value = head.value;
    if (value !== undefined && (head.key !== undefined || !isTrue(value) || isExpandedConst || isDefault)) {
      // Rego v1 writes the value of a ref head's bodyless constant: `a.b.c := true`.
      const isRegoV1RefConst = isExpandedConst && head.key === undefined && head.args.length === 0;
      if (head.loc === value.loc && !head.isElse && isTrue(value) && !isRegoV1RefConst) {
        // The value was generated (`f(1)`, `p[x] if …`): `= true` is implied.
        return [rest, undefined];
      }
      this.write(" := ");
      [rest, error] = this.term(value, rest);
      if (error !== undefined) return [rest, error];
    }
    return [rest, undefined];
  }

  // -------------------------------------------------------------------------------------------
  // Bodies and expressions

  private body(body: FExpr[], comments: FComment[]): Step {
    let [rest, error] = this.insertComments(comments, body[0]!.loc);
    if (error !== undefined) return [rest, error];
    body.forEach((expr, i) => {
      if (i > 0) {
        // A blank line before the expression if there was one in the source.
        const previous = body[i - 1]!;
        const lastRow = previous.loc.row + newlines(previous.loc.text);
        if (expr.loc.row > lastRow + 1) this.blankLine();
      }
      this.startLine();
      [rest, error] = this.expr(expr, rest);
      if (error !== undefined && !isUnexpected(error)) this.errors.push(error);
      this.endLine();
    });
    return [rest, undefined];
  }

  private expr(expr: FExpr, comments: FComment[]): Step {
    const parenTerms = this.parenExpr === expr;
    if (parenTerms) this.parenExpr = undefined;
    let [rest, error] = this.insertComments(comments, expr.loc);
    if (error !== undefined) return [rest, error];
    if (!this.inline) this.startLine();
    if (expr.negated) this.write("not ");
    // `with` stays outside the parentheses: `(x | y with p as 1)` does not parse.
    if (parenTerms) this.write("(");
    const node = expr.node;
    switch (node.kind) {
      case "some":
        [rest, error] = this.someDecl(node.symbols, node.loc, rest);
        if (error !== undefined) return [[], error];
        break;
      case "every":
        [rest, error] = this.every(node, expr.loc, rest);
        if (error !== undefined) return [[], error];
        break;
      case "not":
        [rest, error] = this.not(node.body, node.explicit, expr.loc, rest);
        if (error !== undefined) return [[], error];
        break;
      case "logical":
        [rest, error] = this.logical({ ...expr, node }, rest);
        if (error !== undefined) return [[], error];
        break;
      case "call":
        [rest, error] = this.functionCall(node.terms, rest);
        if (error !== undefined) return [rest, error];
        break;
      case "term":
        [rest, error] = this.term(node.term, rest);
        if (error !== undefined) return [rest, error];
        break;
    }
    if (parenTerms) this.write(")");
    if (expr.with.length === 0) return [rest, undefined];

    let withs = expr.with;
    let lastRow = exprTermsEndRow(expr);
    // The first `with` stays on the row where the expression ends if it was there.
    if (withs[0]!.loc.row === lastRow) {
      [rest, error] = this.with(withs[0]!, rest, false);
      if (error !== undefined) return [rest, error];
      lastRow = withs[0]!.loc.row;
      withs = withs.slice(1);
    }
    let indented = false;
    for (const w of withs) {
      const indent = w.loc.row > lastRow;
      if (indent) {
        if (!indented) {
          this.up();
          indented = true;
        }
        this.endLine();
        this.startLine();
        lastRow = w.loc.row;
      }
      [rest, error] = this.with(w, rest, indent);
      if (error !== undefined) {
        if (indented) this.down();
        return [rest, error];
      }
    }
    if (indented) this.down();
    return [rest, undefined];
  }

  private someDecl(symbols: FTerm[], loc: Loc, comments: FComment[]): Step {
    let [rest, error] = this.insertComments(comments, loc);
    if (error !== undefined) return [[], error];
    this.write("some ");
    let row = loc.row;
    for (const [i, symbol] of symbols.entries()) {
      const value = symbol.value;
      if (value.kind === "call") {
        const arity = INFIX.get(operatorName(value.terms[0]!))?.arity ?? 0;
        [rest, error] = this.inOperator(false, value.terms.slice(1), rest, loc, arity);
        if (error !== undefined) return [[], error];
        continue;
      }
      if (symbol.loc.row > row) {
        this.endLine();
        this.startLine();
        this.write("\t");
        row = symbol.loc.row;
      } else if (i > 0) {
        this.write(" ");
      }
      [rest, error] = this.term(symbol, rest);
      if (error !== undefined) return [[], error];
      if (i < symbols.length - 1) this.write(",");
    }
    return [rest, undefined];
  }

  private every(node: FExpr["node"] & { kind: "every" }, loc: Loc, comments: FComment[]): Step {
    let [rest, error] = this.insertComments(comments, loc);
    if (error !== undefined) return [[], error];
    this.write("every ");
    if (node.key !== undefined) {
      [rest, error] = this.term(node.key, rest);
      if (error !== undefined) return [[], error];
      this.write(", ");
    }
    [rest, error] = this.term(node.value, rest);
    if (error !== undefined) return [[], error];
    this.write(" in ");
    [rest, error] = this.term(node.domain, rest);
    if (error !== undefined) return [[], error];
    this.write(" {");
    [rest, error] = this.comprehensionBody("{", "}", node.body, loc, loc, rest);
    if (error !== undefined && !isUnexpected(error)) return [[], error];
    if (node.body.length === 1 && node.body[0]!.loc.row === node.loc.row) this.write(" ");
    this.write("}");
    return [rest, undefined];
  }

  private not(body: FExpr[], explicit: boolean, loc: Loc, comments: FComment[]): Step {
    let [rest, error] = this.insertComments(comments, loc);
    if (error !== undefined) return [[], error];
    this.write("not ");
    if (explicit || body.length > 1) {
      // A leading set union reads as a comprehension right after the brace.
      if (isUnionExpr(body[0]!)) this.parenExpr = body[0];
      this.write("{");
      [rest, error] = this.comprehensionBody("{", "}", body, loc, loc, rest);
      if (error !== undefined && !isUnexpected(error)) return [[], error];
      if (body[body.length - 1]!.loc.row === loc.row) this.write(" ");
      this.write("}");
      return [rest, undefined];
    }
    const parens = notBodyNeedsParens(body[0]!);
    if (parens) this.write("(");
    [rest, error] = this.expr(body[0]!, rest);
    if (parens) this.write(")");
    if (error !== undefined && !isUnexpected(error)) return [[], error];
    return [rest, undefined];
  }

  /**
   * `a or b` (future keywords `and`/`or`): a left-nested chain on one line, each operand that
   * started on a later line than the one before ended on a line of its own, indented once.
   */
  private logical(expr: FExpr & { node: LogicalNode }, comments: FComment[]): Step {
    const [lhs, steps] = flattenLogical(expr);
    let [rest, error] = this.logicalOperand(lhs, comments);
    if (error !== undefined && !isUnexpected(error)) return [rest, error];
    let indented = false;
    for (const step of steps) {
      this.write(` ${step.op}`);
      if (breaksLine(step)) {
        if (!indented) {
          this.up();
          indented = true;
        }
        this.endLine();
        this.startLine();
      } else {
        this.write(" ");
      }
      [rest, error] = this.logicalOperand(step.rhs, rest);
      if (error !== undefined && !isUnexpected(error)) {
        if (indented) this.down();
        return [rest, error];
      }
    }
    if (indented) this.down();
    return [rest, undefined];
  }

  private logicalOperand(operand: LogicalOperand, comments: FComment[]): Step {
    if (!operand.explicit) {
      if (operand.parens) this.write("(");
      const step = this.expr(operand.body[0]!, comments);
      if (operand.parens) this.write(")");
      return step;
    }
    const first = operand.body[0];
    if (first === undefined) {
      this.write("{}");
      return [comments, undefined];
    }
    if (isUnionExpr(first)) this.parenExpr = first;
    this.write("{");
    const brace = operand.brace;
    const [rest, error] = this.comprehensionBody("{", "}", operand.body, brace, brace, comments);
    if (error !== undefined && !isUnexpected(error)) return [rest, error];
    if (operand.body[operand.body.length - 1]!.loc.row === brace.row) this.write(" ");
    this.write("}");
    return [rest, undefined];
  }

  /** Marks a leading `x | y` of `expr` (or of its leading operand) for parentheses. */
  private markUnionLead(expr: FExpr): void {
    if (expr.negated) return;
    if (isLogical(expr)) {
      const [lhs] = flattenLogical(expr);
      if (!lhs.explicit && !lhs.parens) this.markUnionLead(lhs.body[0]!);
      return;
    }
    if (isUnionExpr(expr)) {
      this.parenExpr = expr;
      return;
    }
    const lead = infixLead(expr);
    if (lead !== undefined && isUnionCall(lead)) this.parenTerm = lead;
  }

  private functionCall(terms: FTerm[], comments: FComment[]): Step {
    const name = operatorName(terms[0]!);
    const infix = INFIX.get(name);
    if (infix === undefined) return this.functionCallPlain(terms, comments);
    if (infix.symbol === "in")
      return this.inOperator(false, terms.slice(1), comments, terms[0]!.loc, infix.arity);
    const args = terms.length - 1;
    let rest = comments;
    let error: WriteError | undefined;
    if (args === infix.arity) {
      // `x != y`
      [rest, error] = this.term(terms[1]!, rest);
      if (error !== undefined) return [[], error];
      this.write(` ${infix.symbol} `);
      return this.term(terms[2]!, rest);
    }
    if (args === infix.arity + 1) {
      // `plus(x, y, z)` is `z = x + y`.
      [rest, error] = this.term(terms[3]!, rest);
      if (error !== undefined) return [[], error];
      this.write(" = ");
      [rest, error] = this.term(terms[1]!, rest);
      if (error !== undefined) return [[], error];
      this.write(` ${infix.symbol} `);
      [rest, error] = this.term(terms[2]!, rest);
      if (error !== undefined) return [[], error];
      return [rest, undefined];
    }
    this.errors.push(new FormatProblem(`${name}: arity mismatch`, terms[0]!.loc));
    return this.functionCallPlain(terms, comments);
  }

  private functionCallPlain(terms: FTerm[], comments: FComment[]): Step {
    const op = terms[0]!;
    if (op.value.kind === "ref") {
      // OPA goes on with the comments it had before writing the operator.
      const [left, refError] = this.writeRef(op.value.terms, comments);
      if (refError !== undefined) return [left, refError];
    } else {
      this.write(termString(op));
    }
    this.write("(");
    const close = closingLoc("", "", "(", ")", op.loc);
    const [rest, error] = this.iterable(terms.slice(1), op.loc, close, comments, this.listWriter(false));
    this.write(")");
    if (error !== undefined) return [[], error];
    return [rest, undefined];
  }

  private with(w: FWith, comments: FComment[], indented: boolean): Step {
    let [rest, error] = this.insertComments(comments, w.loc);
    if (error !== undefined) return [[], error];
    if (!indented) this.write(" ");
    this.write("with ");
    [rest, error] = this.term(w.target, rest);
    if (error !== undefined) return [[], error];
    this.write(" as ");
    [rest, error] = this.term(w.value, rest);
    // An unexpected comment means the value was copied from the source: the chain goes on.
    if (error !== undefined && !isUnexpected(error)) return [rest, error];
    return [rest, undefined];
  }

  // -------------------------------------------------------------------------------------------
  // Terms

  /** Writes a term; on an unexpected comment inside it, writes its source text instead. */
  private term(term: FTerm, comments: FComment[]): Step {
    if (comments.length === 0) return this.termParens(false, term, comments);
    const length = this.buffer.length;
    const level = this.level;
    const saved = [...comments];
    const [rest, error] = this.termParens(false, term, comments);
    if (error === undefined) return [rest, undefined];
    if (!isUnexpected(error)) return [[], error];
    this.buffer = this.buffer.slice(0, length);
    this.level = level;
    // A pending end-of-line comment inside the copied text would be written twice.
    const pending = this.beforeEnd;
    if (pending !== undefined && term.loc.text.length > 0) {
      const endRow = term.loc.row + newlines(term.loc.text);
      if (pending.loc.row >= term.loc.row && pending.loc.row <= endRow) this.beforeEnd = undefined;
    }
    const [left, copyError] = this.writeUnformatted(term.loc, saved);
    if (copyError !== undefined) return [[], copyError];
    return [left, error];
  }

  /** Copies `loc`'s source text; drops the comments inside it. */
  private writeUnformatted(loc: Loc, comments: FComment[]): Step {
    if (loc.text.length === 0) return [[], new FormatProblem("original unformatted text is empty", loc)];
    const rows = newlines(loc.text) + 1;
    this.write(loc.text);
    const rest: FComment[] = [];
    for (const comment of comments) {
      // With a body to come, the comment on the copy's last line ends that line.
      if (this.writeCommentOnFinalLine && comment.loc.row === loc.row + rows - 1) {
        this.write(` ${comment.loc.text}`);
        continue;
      }
      if (comment.loc.row < loc.row + rows - 1) continue;
      rest.push(comment);
    }
    return [rest, undefined];
  }

  private termParens(parens: boolean, term: FTerm, comments: FComment[]): Step {
    if (this.parenTerm === term) {
      this.parenTerm = undefined;
      parens = true;
    }
    let [rest, error] = this.insertComments(comments, term.loc);
    if (error !== undefined) return [[], error];
    if (!this.inline) this.startLine();
    const value = term.value;
    switch (value.kind) {
      case "ref":
        [rest, error] = this.writeRef(value.terms, rest);
        break;
      case "object":
        this.write("{");
        [rest, error] = this.iterable(
          value.entries,
          term.loc,
          closingLoc("", "", "{", "}", term.loc),
          rest,
          this.objectWriter(),
        );
        this.write("}");
        break;
      case "array":
        this.write("[");
        [rest, error] = this.iterable(
          value.items,
          term.loc,
          closingLoc("", "", "[", "]", term.loc),
          rest,
          this.listWriter(true),
        );
        this.write("]");
        break;
      case "set":
        if (value.items.length === 0) {
          this.write("set()");
          [rest, error] = this.insertComments(rest, closingLoc("", "", "(", ")", term.loc));
        } else {
          this.write("{");
          [rest, error] = this.iterable(
            value.items,
            term.loc,
            closingLoc("", "", "{", "}", term.loc),
            rest,
            this.listWriter(true),
          );
          this.write("}");
        }
        break;
      case "arraycompr":
        this.write("[");
        [rest, error] = this.comprehension("[", "]", value.term, value.body, term.loc, rest);
        this.write("]");
        break;
      case "setcompr":
        this.write("{");
        [rest, error] = this.comprehension("{", "}", value.term, value.body, term.loc, rest);
        this.write("}");
        break;
      case "objectcompr":
        this.write("{");
        [rest, error] = this.objectComprehension(value.key, value.value, value.body, term.loc, rest);
        this.write("}");
        break;
      case "string":
        this.writeString(value.value, term.loc);
        break;
      case "template":
        [rest, error] = this.templateString(value.raw, value.parts, rest);
        break;
      case "var":
        this.write(value.name);
        break;
      case "call":
        [rest, error] = this.call(parens, value.terms, term.loc, rest);
        break;
      case "number":
        this.write(value.text);
        break;
      case "boolean":
        this.write(value.value ? "true" : "false");
        break;
      case "null":
        this.write("null");
        break;
    }
    if (error !== undefined) return [[], error];
    if (!this.inline) this.startLine();
    return [rest, undefined];
  }

  /** A string as written in the source (raw or quoted), else quoted as Go quotes it. */
  private writeString(value: string, loc: Loc): void {
    const text = loc.text;
    if (text.startsWith("`")) {
      this.write(text);
      return;
    }
    // The location's text may start before the string (`else := "x"`): cut at its quote.
    const quote = text.endsWith('"') ? '"' : text.endsWith("`") ? "`" : undefined;
    const at = quote === undefined ? -1 : text.indexOf(quote);
    if (quote === undefined || at < 0) this.write(goQuote(value));
    else this.write(quote + text.slice(at + 1));
  }

  private templateString(raw: boolean, parts: Array<FTerm | FExpr>, comments: FComment[]): Step {
    let rest = comments;
    let error: WriteError | undefined;
    this.write(raw ? "$`" : '$"');
    for (const [i, part] of parts.entries()) {
      if ("node" in part) {
        this.write("{");
        this.up();
        if (this.beforeEnd !== undefined) {
          this.endLine();
          this.startLine();
        } else {
          const [before] = partitionComments(rest, part.loc);
          if (before.length > 0) {
            this.write(" ");
            this.inline = true;
            this.comments(before);
            rest = rest.slice(before.length);
          }
        }
        [rest, error] = this.expr(part, rest);
        if (error !== undefined) return [rest, error];
        const next = parts[i + 1];
        if (next !== undefined) {
          const [before] = partitionComments(rest, next.loc);
          if (before.length > 0) {
            this.endLine();
            this.comments(before);
            rest = rest.slice(before.length);
            this.startLine();
          }
        }
        this.write("}");
        this.down();
      } else if (part.value.kind === "string") {
        const text = raw ? part.value.value : goQuote(part.value.value).slice(1, -1);
        this.write(text.replaceAll("{", "\\{"));
      } else {
        this.write(termString(part).replace(/^"|"$/g, ""));
      }
    }
    this.write(raw ? "`" : '"');
    return [rest, undefined];
  }

  private writeRef(terms: FTerm[], comments: FComment[], keywords = this.keywords): Step {
    let rest = comments;
    let error: WriteError | undefined;
    const head = terms[0];
    if (head === undefined) return [rest, undefined];
    const parens = head.value.kind === "call" && head.loc.text.startsWith("(");
    [rest, error] = this.termParens(parens, head, rest);
    if (error !== undefined) return [[], error];
    for (const element of terms.slice(1)) {
      const value = element.value;
      if (value.kind === "string") {
        if (shouldBracket(value.value, element.loc, keywords)) this.write(`[${goQuote(value.value)}]`);
        else this.write(`.${value.value}`);
      } else if (value.kind === "var") {
        this.write(`[${value.name}]`);
      } else {
        this.write("[");
        [rest, error] = this.term(element, rest);
        if (error !== undefined) {
          if (!isUnexpected(error)) return [[], error];
          // Keep the closing bracket out of a copied comment.
          this.write("\n");
        }
        this.write("]");
      }
    }
    return [rest, undefined];
  }

  /** A call inside a term: infix operators get parentheses when `parens` (OPA ignores precedence). */
  private call(parens: boolean, terms: FTerm[], loc: Loc, comments: FComment[]): Step {
    const name = operatorName(terms[0]!);
    const infix = INFIX.get(name);
    if (infix === undefined) return this.functionCallPlain(terms, comments);
    if (infix.symbol === "in") return this.inOperator(true, terms.slice(1), comments, loc, infix.arity);
    if (parens) this.write("(");
    if (infix.arity !== terms.length - 1) {
      this.errors.push(new FormatProblem(`${name}: arity mismatch`, loc));
      return [comments, undefined];
    }
    let [rest, error] = this.termParens(true, terms[1]!, comments);
    if (error !== undefined) return [[], error];
    this.write(` ${infix.symbol} `);
    [rest, error] = this.termParens(true, terms[2]!, rest);
    if (error !== undefined) return [[], error];
    if (parens) this.write(")");
    return [rest, undefined];
  }

  private inOperator(
    parens: boolean,
    operands: FTerm[],
    comments: FComment[],
    loc: Loc,
    arity: number,
  ): Step {
    if (operands.length !== arity) {
      this.errors.push(new FormatProblem(`internal.member_${arity}: arity mismatch`, loc));
      return [comments, undefined];
    }
    let rest = comments;
    let error: WriteError | undefined;
    if (operands.length === 2) {
      [rest, error] = this.termParens(true, operands[0]!, rest);
      if (error !== undefined) return [[], error];
      this.write(" in ");
      [rest, error] = this.termParens(true, operands[1]!, rest);
      if (error !== undefined) return [[], error];
      return [rest, undefined];
    }
    if (parens) this.write("(");
    const done = (step: Step): Step => {
      if (parens) this.write(")");
      return step;
    };
    [rest, error] = this.termParens(true, operands[0]!, rest);
    if (error !== undefined) return done([[], error]);
    this.write(", ");
    [rest, error] = this.termParens(true, operands[1]!, rest);
    if (error !== undefined) return done([[], error]);
    this.write(" in ");
    [rest, error] = this.termParens(true, operands[2]!, rest);
    if (error !== undefined) return done([[], error]);
    return done([rest, undefined]);
  }

  private objectComprehension(key: FTerm, value: FTerm, body: FExpr[], loc: Loc, comments: FComment[]): Step {
    // OPA moves the value to the comprehension's row, so no line break comes before it.
    const valueOnRow: FTerm = { ...value, loc: { ...value.loc, row: loc.row } };
    const paren = isUnionCall(key);
    if (paren) this.write("(");
    let [rest, error] = this.term(key, comments);
    if (error !== undefined) return [[], error];
    if (paren) this.write(")");
    this.write(": ");
    [rest, error] = this.comprehension("{", "}", valueOnRow, body, loc, rest);
    return [rest, error];
  }

  private comprehension(
    open: string,
    close: string,
    term: FTerm,
    body: FExpr[],
    loc: Loc,
    comments: FComment[],
  ): Step {
    if (term.loc.row - loc.row >= 1) {
      this.endLine();
      this.startLine();
    }
    const parens = term.value.kind === "call" && (isUnionCall(term) || term.loc.text.startsWith("("));
    const [rest, error] = this.termParens(parens, term, comments);
    if (error !== undefined) return [[], error];
    this.write(" |");
    return this.comprehensionBody(open, close, body, term.loc, loc, rest);
  }

  private comprehensionBody(
    open: string,
    close: string,
    body: FExpr[],
    term: Loc,
    compr: Loc,
    comments: FComment[],
  ): Step {
    let rest = comments;
    let error: WriteError | undefined;
    const lines = this.groupIterable(body, term);
    if (body[0]!.loc.row - term.row > 0 || lines.length > 1) {
      this.endLine();
      this.up();
      [rest, error] = this.body(body, rest);
      if (error !== undefined) {
        this.down();
        this.startLine();
        return [rest, error];
      }
      [rest, error] = this.insertComments(rest, closingLoc("", "", open, close, compr));
      this.down();
      this.startLine();
      if (error !== undefined) return [[], error];
      return [rest, undefined];
    }
    this.write(" ");
    for (const [i, expr] of body.entries()) {
      if (i > 0) this.write("; ");
      [rest, error] = this.expr(expr, rest);
      if (error !== undefined) return [rest, error];
    }
    [rest, error] = this.insertComments(rest, closingLoc("", "", open, close, compr));
    if (error !== undefined) return [[], error];
    return [rest, undefined];
  }

  // -------------------------------------------------------------------------------------------
  // Collections

  /**
   * Elements on one line, or one line per source line (and a trailing comma) when they were on
   * several or the first followed a line break. A comment inside a one-line collection is an
   * unexpected comment: the collection is copied as written.
   */
  private iterable(
    elements: Element[],
    last: Loc,
    close: Loc,
    comments: FComment[],
    writeEntry: EntryWriter,
  ): Step {
    const lines = this.groupIterable(elements, last);
    let newlinePrecedesItem = false;
    if (lines.length === 1) {
      for (const comment of comments) {
        if (comment.loc.row > last.row && comment.loc.row < close.row)
          return [comments, new UnexpectedComment()];
      }
      const first = lines[0]![0];
      if (first !== undefined) {
        const cut = last.text.indexOf(elementLoc(first).text);
        if (cut > 0) newlinePrecedesItem = last.text.slice(0, cut).indexOf("\n") > 0;
      }
    }
    const isMultiline = lines.length > 1 || (lines.length === 1 && newlinePrecedesItem);
    if (isMultiline) {
      this.delay = true;
      this.endLine();
      this.up();
      this.startLine();
    }
    let rest = comments;
    let error: WriteError | undefined;
    for (const [i, line] of lines.entries()) {
      for (const [j, element] of line.entries()) {
        if (j > 0) this.write(", ");
        [rest, error] = writeEntry(element, rest);
        if (error !== undefined) return [[], error];
      }
      if (i < lines.length - 1) {
        this.write(",");
        this.endLine();
        this.startLine();
      }
    }
    if (isMultiline) {
      this.write(",");
      this.endLine();
      [rest, error] = this.insertComments(rest, close);
      if (error !== undefined) return [[], error];
      this.down();
      this.startLine();
    }
    return [rest, undefined];
  }

  /** Elements sorted by position and grouped by source row. */
  private groupIterable<T extends Element>(elements: T[], last: Loc): T[][] {
    const sorted = [...elements].sort((a, b) => compareLocs(elementLoc(a), elementLoc(b)));
    const lines: T[][] = [];
    let current: T[] = [];
    let previous = last;
    sorted.forEach((element, i) => {
      const loc = elementLoc(element);
      if (loc.row - previous.row > 0 && i > 0) {
        lines.push(current);
        current = [];
      }
      previous = loc;
      current.push(element);
    });
    lines.push(current);
    return lines;
  }

  private objectWriter(): EntryWriter {
    return (element, comments) => {
      if (!Array.isArray(element)) return [comments, undefined];
      const [key, value] = element;
      const keyParens = isUnionCall(key);
      if (keyParens) this.write("(");
      let [rest, error] = this.term(key, comments);
      if (error !== undefined) return [[], error];
      if (keyParens) this.write(")");
      this.write(": ");
      const valueParens = isUnionCall(value);
      if (valueParens) this.write("(");
      [rest, error] = this.term(value, rest);
      if (valueParens) this.write(")");
      return [rest, error];
    };
  }

  private listWriter(parenUnionCalls: boolean): EntryWriter {
    return (element, comments) => {
      if (Array.isArray(element) || "node" in element) return [comments, undefined];
      const parens = isUnionCall(element) && (parenUnionCalls || element.loc.text.startsWith("("));
      if (parens) this.write("(");
      const step = this.term(element, comments);
      if (parens) this.write(")");
      return step;
    };
  }

  // -------------------------------------------------------------------------------------------
  // Comments and lines

  private comments(comments: FComment[]): void {
    let inMetadataBlock = false;
    comments.forEach((comment, i) => {
      if (i > 0) {
        const gap = comment.loc.row - comments[i - 1]!.loc.row;
        if (gap > 1) {
          this.blankLine();
          inMetadataBlock = false;
        } else if (gap === 1 && inMetadataBlock && isMetadataComment(comment)) {
          // A new `# METADATA` block right after another one is set apart.
          this.blankLine();
        }
      }
      if (isMetadataComment(comment)) inMetadataBlock = true;
      this.writeLine(commentText(comment));
    });
  }

  /** Writes the comments above `loc`'s row and keeps one on its row for the end of the line. */
  private insertComments(comments: FComment[], loc: Loc): Step {
    const [before, at, after] = partitionComments(comments, loc);
    this.comments(before);
    const lastBefore = before[before.length - 1];
    if (lastBefore !== undefined && loc.row - lastBefore.loc.row > 1) this.blankLine();
    return [after, this.beforeLineEnd(at)];
  }

  private beforeLineEnd(comment: FComment | undefined): UnexpectedComment | undefined {
    if (this.beforeEnd !== undefined) {
      if (comment === undefined) return undefined;
      this.beforeEnd = undefined;
      return new UnexpectedComment();
    }
    this.beforeEnd = comment;
    return undefined;
  }

  private startLine(): void {
    this.inline = true;
    this.write("\t".repeat(this.level));
  }

  private endLine(): void {
    this.inline = false;
    if (this.beforeEnd !== undefined && !this.delay) {
      this.write(` ${commentText(this.beforeEnd)}`);
      this.beforeEnd = undefined;
    }
    this.delay = false;
    this.write("\n");
  }

  private blankLine(): void {
    if (this.inline) this.endLine();
    this.write("\n");
  }

  private writeLine(text: string): void {
    if (!this.inline) this.startLine();
    this.write(text);
    this.endLine();
  }

  private write(text: string): void {
    this.buffer += text;
  }

  private up(): void {
    this.level++;
  }

  private down(): void {
    if (this.level === 0) {
      this.errors.push(new FormatProblem("negative indentation level"));
      return;
    }
    this.level--;
  }
}

function commentText(comment: FComment): string {
  return `#${comment.text}`;
}

function isMetadataComment(comment: FComment): boolean {
  return comment.text.trim() === "METADATA";
}

/** Whether a ref operand is written in brackets: not a name, or a keyword written so. */
function shouldBracket(value: string, loc: Loc, keywords: ReadonlySet<string>): boolean {
  if (!VAR_COMPATIBLE.test(value)) return true;
  return keywords.has(value) && loc.text.startsWith('"');
}

// ---------------------------------------------------------------------------------------------
// `and` / `or` chains
