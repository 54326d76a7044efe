/**
 * What OPA's writer reads from locations: rows, line counts of a node's text, and the row of a
 * closing bracket found by scanning that text (as OPA does, brackets in strings included).
 */
import type { FComment, FExpr, Loc } from "./tree.ts";

export function newlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) count++;
  return count;
}

export function compareLocs(a: Loc, b: Loc): number {
  return a.row - b.row || a.col - b.col;
}

export const NEGATIVE_ROW: Loc = { row: -1, col: 0, offset: 0, text: "" };

/** Comments above `loc`'s row, the one on it (the last if several), and those below. */
export function partitionComments(
  comments: FComment[],
  loc: Loc,
): [FComment[], FComment | undefined, FComment[]] {
  const before: FComment[] = [];
  const after: FComment[] = [];
  let at: FComment | undefined;
  for (const comment of comments) {
    const cmp = comment.loc.row - loc.row;
    if (cmp < 0) before.push(comment);
    else if (cmp > 0) after.push(comment);
    else at = comment;
  }
  return [before, at, after];
}

/**
 * The row of the `close` bracket matching the first `open` in `loc`'s text, after skipping the
 * first balanced `skipOpen`…`skipClose` group (a rule's arguments or key); row -1 if none.
 */
export function closingLoc(skipOpen: string, skipClose: string, open: string, close: string, loc: Loc): Loc {
  const text = loc.text;
  let i = 0;
  let offset = 0;
  if (skipOpen !== "") [i, offset] = skipPast(skipOpen, skipClose, text);
  while (i < text.length && text[i] !== open) i++;
  if (i >= text.length) return NEGATIVE_ROW;
  let state = 1;
  while (state > 0) {
    i++;
    if (i >= text.length) return NEGATIVE_ROW;
    const c = text[i];
    if (c === open) state++;
    else if (c === close) state--;
    else if (c === "\n") offset++;
  }
  return { row: loc.row + offset, col: 0, offset: 0, text: "" };
}

export function skipPast(open: string, close: string, text: string): [number, number] {
  let i = 0;
  while (i < text.length && text[i] !== open) i++;
  let state = 1;
  let offset = 0;
  while (state > 0) {
    i++;
    if (i >= text.length) return [i, offset];
    const c = text[i];
    if (c === open) state++;
    else if (c === close) state--;
    else if (c === "\n") offset++;
  }
  return [i, offset];
}

/** The row where an expression's own text ends, its `with` modifiers left out. */
export function exprTermsEndRow(expr: FExpr): number {
  let text = expr.loc.text;
  const first = expr.with[0];
  if (first !== undefined) {
    const cut = first.loc.offset - expr.loc.offset;
    if (cut > 0 && cut <= text.length) text = text.slice(0, cut);
  }
  return expr.loc.row + newlines(text.replace(/[ \t\r\n]+$/, ""));
}

export function bodyEndRow(body: FExpr[]): number {
  const last = body[body.length - 1];
  if (last === undefined) return 0;
  return last.loc.row + newlines(last.loc.text.replace(/[ \t\r\n]+$/, ""));
}
