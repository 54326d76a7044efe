/**
 * The difference between two policy revisions' sources (issue 31), file by file, as unified
 * hunks of lines for the Policy changes page. Policies are small text files and edits between
 * revisions are usually a few lines, so the common head and tail are trimmed and the rest is
 * compared by longest common subsequence; a middle too large for that shows as replaced whole.
 */

export interface DiffLine {
  kind: "same" | "removed" | "added";
  text: string;
  /** Line numbers in the old and the new file (absent on the side that lacks the line). */
  old?: number;
  new?: number;
}

export interface FileDiff {
  path: string;
  status: "changed" | "added" | "removed";
  /** Runs of changed lines with up to CONTEXT unchanged lines around them. */
  hunks: DiffLine[][];
}

const CONTEXT = 3;
/** Cells of the LCS table above which a changed middle is shown as replaced whole. */
const MAX_CELLS = 4_000_000;

/** Every file whose text differs (or exists on one side only), sorted by path. */
export function diffSources(
  before: ReadonlyArray<{ path: string; text: string }>,
  after: ReadonlyArray<{ path: string; text: string }>,
): FileDiff[] {
  const old = new Map(before.map((f) => [f.path, f.text]));
  const now = new Map(after.map((f) => [f.path, f.text]));
  const paths = [...new Set([...old.keys(), ...now.keys()])].sort();
  const out: FileDiff[] = [];
  for (const path of paths) {
    const a = old.get(path);
    const b = now.get(path);
    if (a === b) continue;
    const lines = diffLines(a === undefined ? [] : a.split("\n"), b === undefined ? [] : b.split("\n"));
    out.push({
      path,
      status: a === undefined ? "added" : b === undefined ? "removed" : "changed",
      hunks: hunks(lines),
    });
  }
  return out;
}

function diffLines(a: readonly string[], b: readonly string[]): DiffLine[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const out: DiffLine[] = [];
  for (let i = 0; i < start; i++) out.push({ kind: "same", text: a[i]!, old: i + 1, new: i + 1 });
  out.push(...middle(a, b, start, endA, endB));
  for (let i = endA, j = endB; i < a.length; i++, j++)
    out.push({ kind: "same", text: a[i]!, old: i + 1, new: j + 1 });
  return out;
}

/** The changed middle, `a[start, endA)` against `b[start, endB)`, by longest common subsequence. */
function middle(
  a: readonly string[],
  b: readonly string[],
  start: number,
  endA: number,
  endB: number,
): DiffLine[] {
  const n = endA - start;
  const m = endB - start;
  const removed = (i: number): DiffLine => ({ kind: "removed", text: a[i]!, old: i + 1 });
  const added = (j: number): DiffLine => ({ kind: "added", text: b[j]!, new: j + 1 });
  if (n === 0 || m === 0 || (n + 1) * (m + 1) > MAX_CELLS) {
    return [
      ...Array.from({ length: n }, (_, k) => removed(start + k)),
      ...Array.from({ length: m }, (_, k) => added(start + k)),
    ];
  }
  // lcs[i][j]: the longest common subsequence of a[start+i…endA) and b[start+j…endB).
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] =
        a[start + i] === b[start + j]
          ? lcs[(i + 1) * width + j + 1]! + 1
          : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[start + i] === b[start + j]) {
      out.push({ kind: "same", text: a[start + i]!, old: start + i + 1, new: start + j + 1 });
      i++;
      j++;
    } else if (j < m && (i === n || lcs[i * width + j + 1]! >= lcs[(i + 1) * width + j]!)) {
      out.push(added(start + j));
      j++;
    } else {
      out.push(removed(start + i));
      i++;
    }
  }
  return out;
}

/** The changed lines with CONTEXT unchanged lines around them, nearby runs joined. */
function hunks(lines: readonly DiffLine[]): DiffLine[][] {
  const keep = new Array<boolean>(lines.length).fill(false);
  for (const [i, line] of lines.entries()) {
    if (line.kind === "same") continue;
    for (let k = Math.max(0, i - CONTEXT); k <= Math.min(lines.length - 1, i + CONTEXT); k++) keep[k] = true;
  }
  const out: DiffLine[][] = [];
  let current: DiffLine[] | undefined;
  for (const [i, line] of lines.entries()) {
    if (!keep[i]) {
      current = undefined;
      continue;
    }
    if (!current) {
      current = [];
      out.push(current);
    }
    current.push(line);
  }
  return out;
}
