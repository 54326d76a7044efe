/**
 * A unified diff of two texts by lines (Myers' O(ND) algorithm), as `diff -u` prints it: for
 * `writ policy fmt --diff`, which shows what formatting would change.
 */

type Edit = { kind: "same" | "removed" | "added"; line: string };

/** The shortest edit script from `a` to `b`. */
function diffLines(a: string[], b: string[]): Edit[] {
  const n = a.length;
  const m = b.length;
  const offset = n + m + 1;
  const v = new Int32Array(2 * offset + 1);
  // `trace[d]` is the furthest x reached on each diagonal k before step d.
  const trace: Int32Array[] = [];
  const furthest = (row: Int32Array, k: number, d: number): boolean =>
    k === -d || (k !== d && row[offset + k - 1]! < row[offset + k + 1]!);
  search: for (let d = 0; d <= n + m; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = furthest(v, k, d) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) break search;
    }
  }
  const edits: Edit[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const row = trace[d]!;
    const k = x - y;
    const prevK = furthest(row, k, d) ? k + 1 : k - 1;
    const prevX = row[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      edits.push({ kind: "same", line: a[--x]! });
      y--;
    }
    if (d > 0) {
      if (x === prevX) edits.push({ kind: "added", line: b[--y]! });
      else edits.push({ kind: "removed", line: a[--x]! });
    }
  }
  return edits.reverse();
}

function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function range(start: number, length: number): string {
  if (length === 1) return `${start}`;
  return `${length === 0 ? start - 1 : start},${length}`;
}

/** `diff -u` output from `before` (named `fromName`) to `after`; empty when they are equal. */
export function unifiedDiff(
  before: string,
  after: string,
  fromName: string,
  toName: string,
  context = 3,
): string {
  if (before === after) return "";
  const edits = diffLines(splitLines(before), splitLines(after));
  const changed = edits.map((edit, i) => (edit.kind === "same" ? -1 : i)).filter((i) => i >= 0);
  const out = [`--- ${fromName}`, `+++ ${toName}`];
  let i = 0;
  while (i < changed.length) {
    // A hunk: changes closer than twice the context share one.
    let last = changed[i]!;
    let j = i + 1;
    while (j < changed.length && changed[j]! - last <= 2 * context) last = changed[j++]!;
    const start = Math.max(0, changed[i]! - context);
    const end = Math.min(edits.length, last + context + 1);
    let oldStart = 1;
    let newStart = 1;
    for (const edit of edits.slice(0, start)) {
      if (edit.kind !== "added") oldStart++;
      if (edit.kind !== "removed") newStart++;
    }
    const hunk = edits.slice(start, end);
    const oldLength = hunk.filter((e) => e.kind !== "added").length;
    const newLength = hunk.filter((e) => e.kind !== "removed").length;
    out.push(`@@ -${range(oldStart, oldLength)} +${range(newStart, newLength)} @@`);
    for (const edit of hunk)
      out.push(`${edit.kind === "same" ? " " : edit.kind === "removed" ? "-" : "+"}${edit.line}`);
    i = j;
  }
  return `${out.join("\n")}\n`;
}
