/**
 * Calls and terms as OPA's writer sees them: which operators it writes infix, which terms lead
 * with a brace or are a set union, and OPA's `Term.String()` where the writer uses it.
 */
import { goQuote } from "./go-quote.ts";
import type { FExpr, FTerm } from "./tree.ts";

/** Operators OPA writes infix, with the number of operands they take. */
export const INFIX: ReadonlyMap<string, { symbol: string; arity: number }> = new Map([
  ["eq", { symbol: "=", arity: 2 }],
  ["assign", { symbol: ":=", arity: 2 }],
  ["equal", { symbol: "==", arity: 2 }],
  ["neq", { symbol: "!=", arity: 2 }],
  ["lt", { symbol: "<", arity: 2 }],
  ["lte", { symbol: "<=", arity: 2 }],
  ["gt", { symbol: ">", arity: 2 }],
  ["gte", { symbol: ">=", arity: 2 }],
  ["plus", { symbol: "+", arity: 2 }],
  ["minus", { symbol: "-", arity: 2 }],
  ["mul", { symbol: "*", arity: 2 }],
  ["div", { symbol: "/", arity: 2 }],
  ["rem", { symbol: "%", arity: 2 }],
  ["and", { symbol: "&", arity: 2 }],
  ["or", { symbol: "|", arity: 2 }],
  ["internal.member_2", { symbol: "in", arity: 2 }],
  ["internal.member_3", { symbol: "in", arity: 3 }],
]);

export const VAR_COMPATIBLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function operatorName(term: FTerm): string {
  const value = term.value;
  if (value.kind === "var") return value.name;
  if (value.kind !== "ref") return "";
  return value.terms
    .map((t, i) =>
      t.value.kind === "var" ? t.value.name : t.value.kind === "string" && i > 0 ? t.value.value : "?",
    )
    .join(".");
}

export function isTrue(term: FTerm | undefined): boolean {
  return term !== undefined && term.value.kind === "boolean" && term.value.value;
}

export function isTrueBody(body: FExpr[]): boolean {
  const only = body[0];
  return (
    body.length === 1 &&
    only !== undefined &&
    !only.negated &&
    only.with.length === 0 &&
    only.node.kind === "term" &&
    isTrue(only.node.term)
  );
}

export function isSetTerm(expr: FExpr): boolean {
  return !expr.negated && expr.node.kind === "term" && expr.node.term.value.kind === "set";
}

export function isUnionCall(term: FTerm): boolean {
  return term.value.kind === "call" && operatorName(term.value.terms[0]!) === "or";
}

export function isUnionExpr(expr: FExpr): boolean {
  return (
    expr.node.kind === "call" && expr.node.terms.length === 3 && operatorName(expr.node.terms[0]!) === "or"
  );
}

/** The operand an infix call expression is written with first (`x` of `x | y == z`). */
export function infixLead(expr: FExpr): FTerm | undefined {
  if (expr.node.kind !== "call") return undefined;
  const terms = expr.node.terms;
  const infix = INFIX.get(operatorName(terms[0]!));
  if (infix === undefined) return undefined;
  if (terms.length === infix.arity + 1) return terms[1];
  if (terms.length === infix.arity + 2) return terms[terms.length - 1];
  return undefined;
}

/** Whether an expression is written starting with `{` (a set, object, or one of them first). */
export function exprRendersBraceLead(expr: FExpr): boolean {
  if (expr.node.kind === "term") return termRendersBraceLead(expr.node.term);
  const lead = infixLead(expr);
  return lead !== undefined && termRendersBraceLead(lead);
}

export function termRendersBraceLead(term: FTerm): boolean {
  const value = term.value;
  switch (value.kind) {
    case "set":
      return value.items.length > 0;
    case "object":
    case "setcompr":
    case "objectcompr":
      return true;
    case "ref":
      return value.terms[0] !== undefined && termRendersBraceLead(value.terms[0]);
    case "call": {
      const infix = INFIX.get(operatorName(value.terms[0]!));
      return (
        infix !== undefined && value.terms.length === infix.arity + 1 && termRendersBraceLead(value.terms[1]!)
      );
    }
    default:
      return false;
  }
}

/** OPA's `Term.String()` for the few places the writer uses it (a two-part head's brackets). */
export function termString(term: FTerm): string {
  const value = term.value;
  switch (value.kind) {
    case "var":
      return value.name;
    case "string":
      return goQuote(value.value);
    case "number":
      return value.text;
    case "boolean":
      return value.value ? "true" : "false";
    case "null":
      return "null";
    case "ref":
      return value.terms
        .map((t, i) => {
          if (i === 0) return termString(t);
          if (t.value.kind === "string" && VAR_COMPATIBLE.test(t.value.value)) return `.${t.value.value}`;
          return `[${termString(t)}]`;
        })
        .join("");
    case "array":
      return `[${value.items.map(termString).join(", ")}]`;
    case "set":
      return value.items.length === 0 ? "set()" : `{${value.items.map(termString).join(", ")}}`;
    case "object":
      return `{${value.entries.map(([k, v]) => `${termString(k)}: ${termString(v)}`).join(", ")}}`;
    case "call": {
      const [op, ...args] = value.terms;
      return `${termString(op!)}(${args.map(termString).join(", ")})`;
    }
    default:
      return term.loc.text;
  }
}
