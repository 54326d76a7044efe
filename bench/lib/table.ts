/** Plain-text tables for the benchmarks' output: the first column left-aligned, the others right-aligned. */
import type { LoadResult } from "./load.ts";

export type Cell = string | number | null | undefined;

/**
 * A number as a table shows it: from 100 up rounded and grouped by thousands, others to `digits`
 * decimals (one more under 1: ratios).
 */
export function formatNumber(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value) || Math.abs(value) >= 100) {
    return Math.round(value).toLocaleString("en-US");
  }
  return value.toFixed(Math.abs(value) < 1 ? digits + 1 : digits);
}

function text(cell: Cell): string {
  if (cell === null || cell === undefined) return "-";
  return typeof cell === "number" ? formatNumber(cell) : cell;
}

/** The lines of a table; `header` may be omitted. */
export function formatTable(rows: Cell[][], header?: string[]): string[] {
  const all = header ? [header, ...rows.map((row) => row.map(text))] : rows.map((row) => row.map(text));
  const widths: number[] = [];
  for (const row of all) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return all.map((row) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}

export function printTable(rows: Cell[][], header?: string[]): void {
  for (const line of formatTable(rows, header)) console.log(line);
}

/** The column titles of {@link loadCells}. */
export const loadColumns = ["req/s", "p50 ms", "p97.5", "p99", "p99.9", "max", "errors", "non-2xx"];

/** A load run's numbers as table cells, in the order of {@link loadColumns}. */
export function loadCells(r: LoadResult): Cell[] {
  return [r.rps, r.p50, r.p97_5, r.p99, r.p99_9, r.max, r.errors, r.non2xx];
}
