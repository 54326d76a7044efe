/**
 * Prints an AST back to Rego v1 source in the style of `opa fmt` (tab indentation, `if` before
 * every body, `contains` for multi-value rules). Parsing the output gives the same AST, ignoring
 * locations and comments; comments of a module are kept, placed before the statement or body
 * line that follows them.
 *
 * Parentheses are added only where the grammar needs them: for precedence, around
 * `k, v in xs` outside expression positions, around the term of a comprehension (which OPA
 * parses as a single operand), and where a leading `a | b` would read as a comprehension.
 */
import type {
  Body,
  CallTerm,
  Comment,
  Every,
  Expr,
  Import,
  Module,
  RefTerm,
  Rule,
  RuleHead,
  TemplateStringTerm,
  Term,
  VarTerm,
} from "./ast.ts";
import { isTemplateExpr } from "./ast.ts";

/** Name of the call OPA builds for `x in xs`. */
export const MEMBER_2 = "internal.member_2";
/** Name of the call OPA builds for `k, v in xs`. */
export const MEMBER_3 = "internal.member_3";

/** The dotted name of a call operator (`count`, `object.get`), if it is a plain name. */
export function operatorName(op: VarTerm | RefTerm): string | undefined {
  if (op.type === "var") return op.name;
  if (op.head.type !== "var") return undefined;
  let name = op.head.name;
  for (const element of op.path) {
    if (element.type !== "string") return undefined;
    name += `.${element.value}`;
  }
  return name;
}

/**
 * Binding levels used for parenthesizing. A position accepts a term whose level is at least the
 * position's minimum: 0 expression (`k, v in xs` allowed), 1 list element (`x in xs`), 2 relation
 * operand, 3 `|`, 4 `&`, 5 `+ -`, 6 `* / %`, 7 a single operand.
 */
const EXPRESSION = 0;
const LIST_ELEMENT = 1;
const RELATION_OPERAND = 2;
const OPERAND = 7;

const BINARY_OPERATORS: ReadonlyMap<string, { symbol: string; level: number }> = new Map([
  ["equal", { symbol: "==", level: 2 }],
  ["neq", { symbol: "!=", level: 2 }],
  ["lt", { symbol: "<", level: 2 }],
  ["lte", { symbol: "<=", level: 2 }],
  ["gt", { symbol: ">", level: 2 }],
  ["gte", { symbol: ">=", level: 2 }],
  ["or", { symbol: "|", level: 3 }],
  ["and", { symbol: "&", level: 4 }],
  ["plus", { symbol: "+", level: 5 }],
  ["minus", { symbol: "-", level: 5 }],
  ["mul", { symbol: "*", level: 6 }],
  ["div", { symbol: "/", level: 6 }],
  ["rem", { symbol: "%", level: 6 }],
]);

/** How an infix call prints: its level, the token after its left operand, that operand's minimum. */
interface InfixShape {
  level: number;
  symbolAfterLeft: string;
  leftMinimum: number;
}

function infixShape(term: Term): InfixShape | undefined {
  if (term.type !== "call") return undefined;
  const name = operatorName(term.op);
  if (name === undefined) return undefined;
  const arity = term.args.length;
  if (name === MEMBER_2 && arity === 2) return { level: 1, symbolAfterLeft: "in", leftMinimum: LIST_ELEMENT };
  if (name === MEMBER_3 && arity === 3)
    return { level: 0, symbolAfterLeft: ",", leftMinimum: RELATION_OPERAND };
  const binary = term.op.type === "var" && arity === 2 ? BINARY_OPERATORS.get(name) : undefined;
  return binary && { level: binary.level, symbolAfterLeft: binary.symbol, leftMinimum: binary.level };
}

function levelOf(term: Term): number {
  return infixShape(term)?.level ?? OPERAND;
}

/**
 * Whether `term`, printed at `minimum`, starts with an operand followed by `|`. At the start of
 * `[…]` or `{…}` that reads as a comprehension, so such a term needs parentheses there.
 */
function leadsWithPipe(term: Term, minimum: number): boolean {
  let current = term;
  let currentMinimum = minimum;
  for (;;) {
    const shape = infixShape(current);
    if (shape === undefined || shape.level < currentMinimum || current.type !== "call") return false;
    const left = current.args[0]!;
    const leftShape = infixShape(left);
    if (leftShape === undefined || leftShape.level < shape.leftMinimum) return shape.symbolAfterLeft === "|";
    current = left;
    currentMinimum = shape.leftMinimum;
  }
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A JSON string literal; a byte-order mark is escaped too, since OPA's scanner rejects it. */
function quoteString(value: string): string {
  const quoted = JSON.stringify(value);
  return quoted.includes("\ufeff") ? quoted.replaceAll("\ufeff", "\\ufeff") : quoted;
}

// ---------------------------------------------------------------------------------------------
// Terms

/** Prints a term as it would appear in an expression. */
export function printTerm(term: Term): string {
  return termAt(term, EXPRESSION);
}

function termAt(term: Term, minimum: number): string {
  const text = renderTerm(term);
  return levelOf(term) < minimum ? `(${text})` : text;
}

/** A list element; parenthesized when it would start a comprehension at the head of a list. */
function elementAt(term: Term, isFirst: boolean): string {
  if (isFirst && leadsWithPipe(term, LIST_ELEMENT)) return `(${renderTerm(term)})`;
  return termAt(term, LIST_ELEMENT);
}

function renderTerm(term: Term): string {
  switch (term.type) {
    case "null":
      return "null";
    case "boolean":
      return term.value ? "true" : "false";
    case "number":
      return term.value;
    case "string":
      return quoteString(term.value);
    case "var":
      return term.name;
    case "ref":
      return renderRef(term);
    case "array":
      return `[${term.items.map((item, i) => elementAt(item, i === 0)).join(", ")}]`;
    case "set":
      return term.items.length === 0
        ? "set()"
        : `{${term.items.map((item, i) => elementAt(item, i === 0)).join(", ")}}`;
    case "object":
      return `{${term.entries.map(([key, value], i) => `${elementAt(key, i === 0)}: ${elementAt(value, i === 0)}`).join(", ")}}`;
    case "arraycompr":
      return `[${termAt(term.term, OPERAND)} | ${inlineBody(term.body)}]`;
    case "setcompr":
      return `{${termAt(term.term, OPERAND)} | ${inlineBody(term.body)}}`;
    case "objectcompr":
      return `{${elementAt(term.key, true)}: ${termAt(term.value, OPERAND)} | ${inlineBody(term.body)}}`;
    case "call":
      return renderCall(term);
    case "templatestring":
      return renderTemplateString(term);
  }
}

/** `$"…{expr}…"` (or the raw form), braces in the text escaped. */
function renderTemplateString(term: TemplateStringTerm): string {
  let text = "";
  for (const part of term.parts) {
    if (isTemplateExpr(part)) {
      text += `{${renderExpr(part, false)}}`;
    } else if (part.type === "string") {
      const escaped = term.raw ? part.value : quoteString(part.value).slice(1, -1);
      text += escaped.replaceAll("{", "\\{");
    } else {
      text += `{${printTerm(part)}}`;
    }
  }
  return term.raw ? `$\`${text}\`` : `$"${text}"`;
}

function renderCall(term: CallTerm): string {
  const shape = infixShape(term);
  const args = term.args;
  if (shape === undefined) {
    return `${renderOperator(term.op)}(${args.map((arg) => termAt(arg, LIST_ELEMENT)).join(", ")})`;
  }
  if (shape.level === 0) {
    return `${termAt(args[0]!, RELATION_OPERAND)}, ${termAt(args[1]!, RELATION_OPERAND)} in ${termAt(args[2]!, RELATION_OPERAND)}`;
  }
  const right = shape.level === 1 ? RELATION_OPERAND : shape.level + 1;
  return `${termAt(args[0]!, shape.leftMinimum)} ${shape.symbolAfterLeft} ${termAt(args[1]!, right)}`;
}

function renderOperator(op: VarTerm | RefTerm): string {
  return op.type === "var" ? op.name : renderRef(op);
}

function renderRef(ref: RefTerm): string {
  let text = refHead(ref.head);
  for (const element of ref.path) {
    text +=
      element.type === "string" && IDENTIFIER.test(element.value)
        ? `.${element.value}`
        : `[${printTerm(element)}]`;
  }
  return text;
}

function refHead(head: Term): string {
  const text = renderTerm(head);
  return head.type === "ref" || levelOf(head) < OPERAND ? `(${text})` : text;
}

// ---------------------------------------------------------------------------------------------
// Expressions and bodies

/** Prints a body on one line, expressions separated by `; ` (the form of a query). */
export function printBody(body: Body): string {
  return inlineBody(body);
}

function inlineBody(body: Body): string {
  return body.map((expr) => renderExpr(expr, false)).join("; ");
}

function isAssignment(term: Term): term is CallTerm {
  if (term.type !== "call" || term.args.length !== 2 || term.op.type !== "var") return false;
  return term.op.name === "assign" || term.op.name === "eq";
}

/**
 * One expression on one line. `guardPipe` parenthesizes a leading `a | b`, which the first
 * expression of `p if { … }` needs (OPA first tries to read that body as a set literal).
 */
function renderExpr(expr: Expr, guardPipe: boolean): string {
  const node = expr.node;
  let text: string;
  if (node.type === "some") {
    text = renderSome(node.symbols);
  } else if (node.type === "every") {
    text = `${everyHead(node)} { ${inlineBody(node.body)} }`;
  } else if (node.type === "body") {
    text = `{ ${inlineBody(node.body)} }`;
  } else if (node.type === "logical") {
    text = `${logicalOperand(node.lhs)} ${node.op} ${logicalOperand(node.rhs)}`;
  } else if (isAssignment(node)) {
    const symbol = node.op.type === "var" && node.op.name === "assign" ? ":=" : "=";
    text = `${leadingTerm(node.args[0]!, guardPipe)} ${symbol} ${printTerm(node.args[1]!)}`;
  } else {
    text = leadingTerm(node, guardPipe);
  }
  return (expr.negated ? "not " : "") + text + renderWiths(expr);
}

/** An operand of `and` / `or`, in braces (an explicit body holds any expression). */
function logicalOperand(body: Body): string {
  return `{ ${inlineBody(body)} }`;
}

function leadingTerm(term: Term, guardPipe: boolean): string {
  return guardPipe && leadsWithPipe(term, EXPRESSION) ? `(${renderTerm(term)})` : printTerm(term);
}

function everyHead(every: Every): string {
  const key = every.key === undefined ? "" : `${termAt(every.key, RELATION_OPERAND)}, `;
  return `every ${key}${termAt(every.value, RELATION_OPERAND)} in ${termAt(every.domain, RELATION_OPERAND)}`;
}

function renderWiths(expr: Expr): string {
  return expr.with.map((w) => ` with ${renderOperator(w.target)} as ${printTerm(w.value)}`).join("");
}

function renderSome(symbols: Term[]): string {
  const first = symbols[0];
  if (symbols.length === 1 && first !== undefined && infixShape(first) !== undefined) {
    return `some ${renderTerm(first)}`;
  }
  return `some ${symbols.map((symbol) => termAt(symbol, OPERAND)).join(", ")}`;
}

// ---------------------------------------------------------------------------------------------
// Modules and rules

/** Collects output lines; emits the module's comments before the first line that follows them. */
class LineWriter {
  private readonly lines: string[] = [];
  private readonly comments: Comment[];
  private nextComment = 0;
  private depth = 0;

  constructor(comments: Comment[]) {
    this.comments = [...comments].sort((a, b) => a.loc.offset - b.loc.offset);
  }

  /** Writes a line; `offset` is where its node starts, so earlier comments go first. */
  line(text: string, offset?: number): void {
    if (offset !== undefined) this.commentsBefore(offset);
    this.lines.push("\t".repeat(this.depth) + text);
  }

  blank(): void {
    if (this.lines.length > 0 && this.lines[this.lines.length - 1] !== "") this.lines.push("");
  }

  indented(write: () => void): void {
    this.depth++;
    write();
    this.depth--;
  }

  commentsBefore(offset: number): void {
    const comments = this.comments;
    while (this.nextComment < comments.length && comments[this.nextComment]!.loc.offset < offset) {
      this.lines.push(`${"\t".repeat(this.depth)}#${comments[this.nextComment]!.text}`);
      this.nextComment++;
    }
  }

  toString(): string {
    this.commentsBefore(Number.POSITIVE_INFINITY);
    return `${this.lines.join("\n")}\n`;
  }
}

/** Writes a body one expression per line; `every` bodies become nested blocks. */
function writeBody(out: LineWriter, body: Body, guardFirstPipe: boolean): void {
  body.forEach((expr, index) => {
    const next = body[index + 1];
    // A line starting with `-` would continue the previous expression (`x := y` / `-1 == z`).
    const terminator = next !== undefined && startsWithMinus(next) ? ";" : "";
    writeExpr(out, expr, guardFirstPipe && index === 0, terminator);
  });
}

function writeExpr(out: LineWriter, expr: Expr, guardPipe: boolean, terminator: string): void {
  const node = expr.node;
  if (node.type !== "every") {
    out.line(renderExpr(expr, guardPipe) + terminator, expr.loc.offset);
    return;
  }
  out.line(`${expr.negated ? "not " : ""}${everyHead(node)} {`, expr.loc.offset);
  out.indented(() => writeBody(out, node.body, false));
  out.line(`}${renderWiths(expr)}${terminator}`);
}

function startsWithMinus(expr: Expr): boolean {
  const node = expr.node;
  if (
    expr.negated ||
    node.type === "some" ||
    node.type === "every" ||
    node.type === "body" ||
    node.type === "logical"
  )
    return false;
  return printTerm(isAssignment(node) ? node.args[0]! : node).startsWith("-");
}

/** Prints a module as Rego v1 source. */
export function printModule(module: Module): string {
  const out = new LineWriter(module.comments);
  out.line(`package ${packagePath(module.package.path)}`, module.package.loc.offset);
  if (module.imports.length > 0) out.blank();
  for (const imp of module.imports) out.line(renderImport(imp), imp.loc.offset);
  for (const rule of module.rules) {
    out.blank();
    writeRule(out, rule);
  }
  return out.toString();
}

function packagePath(path: string[]): string {
  return path
    .map((part, i) => {
      if (IDENTIFIER.test(part)) return i === 0 ? part : `.${part}`;
      return i === 0 ? quoteString(part) : `[${quoteString(part)}]`;
    })
    .join("");
}

function renderImport(imp: Import): string {
  const alias = imp.alias === undefined ? "" : ` as ${imp.alias}`;
  return `import ${renderOperator(imp.path)}${alias}`;
}

/** Writes a rule and its `else` chain: `p := 1 if {` … `} else := 2 if {` … `}`. */
function writeRule(out: LineWriter, rule: Rule): void {
  out.commentsBefore(rule.loc.offset);
  let line = (rule.default ? "default " : "") + renderHead(rule.head);
  for (let current: Rule | undefined = rule; current !== undefined; current = current.else) {
    if (current !== rule) {
      const value = current.head.value;
      line += value === undefined ? " else" : ` else ${current.head.assign ? ":=" : "="} ${printTerm(value)}`;
    }
    if (current.body.length > 0) {
      out.line(`${line} if {`);
      const body = current.body;
      out.indented(() => writeBody(out, body, current === rule));
      line = "}";
    }
  }
  out.line(line);
}

function renderHead(head: RuleHead): string {
  let text = renderOperator(head.ref);
  if (head.args !== undefined) text += `(${head.args.map((arg) => termAt(arg, LIST_ELEMENT)).join(", ")})`;
  if (head.key !== undefined) return `${text} contains ${printTerm(head.key)}`;
  if (head.value !== undefined) text += ` ${head.assign ? ":=" : "="} ${printTerm(head.value)}`;
  return text;
}
