/**
 * `and` / `or` chains (future keywords), as OPA's writer lays them out: a left-nested chain is
 * one chain, an operand written in braces stays braced, an operand that started on a later line
 * than the previous one ended keeps its own line.
 */
import { exprRendersBraceLead } from "./operators.ts";
import { bodyEndRow, closingLoc, newlines } from "./rows.ts";
import type { FExpr, Loc } from "./tree.ts";

export interface LogicalOperand {
  body: FExpr[];
  /** Written in braces, which scope its expressions. */
  explicit: boolean;
  /** An implicit operand that needs parentheses to be read back as itself. */
  parens: boolean;
  /** The opening brace of an explicit operand. */
  brace: Loc;
}

export interface LogicalStep {
  op: "and" | "or";
  rhs: LogicalOperand;
  /** The row on which everything left of the operator ends. */
  lhsEndRow: number;
}

export type LogicalNode = FExpr["node"] & { kind: "logical" };

export function isLogical(expr: FExpr): expr is FExpr & { node: LogicalNode } {
  return expr.node.kind === "logical";
}

/** The leading operand and the operator applications of a left-nested chain. */
export function flattenLogical(expr: FExpr & { node: LogicalNode }): [LogicalOperand, LogicalStep[]] {
  const node = expr.node;
  const step: LogicalStep = {
    op: node.op,
    rhs: logicalOperandOf(node.rhs, node.rhsExplicit, node.op, true, expr.loc),
    lhsEndRow: 0,
  };
  const only = node.lhs[0];
  if (
    !node.lhsExplicit &&
    node.lhs.length === 1 &&
    only !== undefined &&
    isLogical(only) &&
    !logicalNeedsParens(only, node.op, false)
  ) {
    step.lhsEndRow = bodyEndRow(node.lhs);
    const [first, steps] = flattenLogical(only);
    return [first, [...steps, step]];
  }
  const first = logicalOperandOf(node.lhs, node.lhsExplicit, node.op, false, expr.loc);
  step.lhsEndRow = logicalOperandEndRow(first);
  return [first, [step]];
}

export function logicalOperandOf(
  body: FExpr[],
  explicit: boolean,
  parentOp: string,
  rhs: boolean,
  node: Loc,
): LogicalOperand {
  if (explicit || body.length !== 1) {
    return { body, explicit: true, parens: false, brace: operandBraceLoc(node, body) };
  }
  return { body, explicit: false, parens: logicalNeedsParens(body[0]!, parentOp, rhs), brace: node };
}

/** Whether an implicit operand of `parentOp` needs parentheses to be read back as itself. */
export function logicalNeedsParens(expr: FExpr, parentOp: string, rhs: boolean): boolean {
  if (expr.with.length > 0) return true;
  const node = expr.node;
  if (node.kind === "logical") {
    // `or` binds looser than `and`; both nest to the left.
    return node.op === "or" ? parentOp === "and" || rhs : parentOp === "and" && rhs;
  }
  return exprRendersBraceLead(expr);
}

/** Whether the only expression of `not (…)` needs its parentheses. */
export function notBodyNeedsParens(expr: FExpr): boolean {
  if (expr.with.length > 0 || isLogical(expr) || expr.node.kind === "not") return true;
  return exprRendersBraceLead(expr);
}

export function breaksLine(step: LogicalStep): boolean {
  const start = step.rhs.explicit ? step.rhs.brace : step.rhs.body[0]?.loc;
  return start !== undefined && start.row > step.lhsEndRow;
}

export function logicalOperandEndRow(operand: LogicalOperand): number {
  if (operand.explicit) {
    const row = closingLoc("", "", "{", "}", operand.brace).row;
    if (row > 0) return row;
  }
  return bodyEndRow(operand.body);
}

/** The `{` opening an explicit operand, found in the chain's text before its first expression. */
export function operandBraceLoc(node: Loc, body: FExpr[]): Loc {
  const first = body[0];
  if (first === undefined) return node;
  for (let i = Math.min(first.loc.offset - node.offset, node.text.length) - 1; i >= 0; i--) {
    if (node.text[i] !== "{") continue;
    const row = node.row + newlines(node.text.slice(0, i));
    return { row, col: node.col, offset: node.offset + i, text: node.text.slice(i) };
  }
  return node;
}
