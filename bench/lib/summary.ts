/**
 * The machine-readable summary a benchmark writes with `--json <file>`, and the side-by-side
 * comparison of two of them (`--compare <old.json>`).
 *
 * A summary is a list of named rows, each a set of numeric metrics (`rps`, `p99`, `ratio`, …),
 * plus the pass/fail criteria, a few notes, the machine and the configuration. Rows are matched
 * by name across runs, so keep names stable (e.g. `proposals @32`).
 */
import { readFile, writeFile } from "node:fs/promises";
import { z } from "zod";
import type { LoadResult } from "./load.ts";
import { describeMachine, type MachineInfo } from "./machine.ts";
import { type Cell, formatNumber, printTable } from "./table.ts";

const machineSchema: z.ZodType<MachineInfo> = z.object({
  date: z.string(),
  node: z.string(),
  platform: z.string(),
  cpuModel: z.string(),
  cpuCount: z.number(),
  commit: z.string().nullable(),
  loadAverage: z.number().optional(),
});

const rowSchema = z.object({ name: z.string(), metrics: z.record(z.string(), z.number()) });

const criterionSchema = z.object({
  name: z.string(),
  pass: z.boolean(),
  value: z.number(),
  limit: z.string(),
});

const summarySchema = z.object({
  bench: z.string(),
  machine: machineSchema,
  config: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.number()), z.null()])),
  rows: z.array(rowSchema),
  criteria: z.array(criterionSchema),
  notes: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
});

export type SummaryRow = z.infer<typeof rowSchema>;
export type Criterion = z.infer<typeof criterionSchema>;
export type Summary = z.infer<typeof summarySchema>;

/** The metrics of a load run as a summary row. */
export function loadRow(name: string, load: LoadResult, extra: Record<string, number> = {}): SummaryRow {
  return { name, metrics: { ...extra, ...load } };
}

export async function writeSummary(file: string, summary: Summary): Promise<void> {
  await writeFile(file, `${JSON.stringify(summary, null, 2)}\n`);
}

export async function readSummary(file: string): Promise<Summary> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new Error(`${file} is not a benchmark summary (--json output): ${String(error)}`);
  }
  const parsed = summarySchema.safeParse(json);
  if (!parsed.success) {
    throw new Error(`${file} is not a benchmark summary (--json output): ${parsed.error.message}`);
  }
  return parsed.data;
}

function ratio(newer: number | undefined, older: number | undefined): Cell {
  if (newer === undefined || older === undefined) return null;
  if (older === 0) return newer === 0 ? "1.00x" : "-";
  return `${(newer / older).toFixed(2)}x`;
}

/**
 * Prints old against new for the rows that have at least one of `metrics`: for each metric the
 * old value, the new value and new/old. Rows only in one of the summaries show `-` for the other.
 */
export function printComparison(older: Summary, newer: Summary, metrics: string[]): void {
  const names = [...newer.rows.map((row) => row.name)];
  for (const row of older.rows) if (!names.includes(row.name)) names.push(row.name);
  const byName = (summary: Summary) => new Map(summary.rows.map((row) => [row.name, row.metrics]));
  const olds = byName(older);
  const news = byName(newer);
  const rows: Cell[][] = [];
  for (const name of names) {
    const o = olds.get(name) ?? {};
    const n = news.get(name) ?? {};
    if (!metrics.some((metric) => metric in o || metric in n)) continue;
    rows.push([
      name,
      ...metrics.flatMap((metric): Cell[] => [o[metric], n[metric], ratio(n[metric], o[metric])]),
    ]);
  }
  if (rows.length === 0) return;
  printTable(rows, ["", ...metrics.flatMap((metric) => [`${metric} old`, "new", "new/old"])]);
}

/** Prints both runs' machines and each criterion's old and new verdict. */
export function printComparisonHeader(older: Summary, newer: Summary): void {
  const describe = (s: Summary) =>
    `${describeMachine(s.machine)}  ${Object.entries(s.config)
      .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join(",") : String(value)}`)
      .join(" ")}`;
  console.log(`old: ${describe(older)}`);
  console.log(`new: ${describe(newer)}`);
  if (JSON.stringify(older.config) !== JSON.stringify(newer.config)) {
    console.log("note: the two runs' settings differ; rows and criteria match by name only");
  }
}

export function printCriteriaComparison(older: Summary, newer: Summary): void {
  const olds = new Map(older.criteria.map((criterion) => [criterion.name, criterion]));
  printTable(
    newer.criteria.map((criterion) => {
      const old = olds.get(criterion.name);
      return [
        criterion.name,
        old ? `${old.pass ? "PASS" : "FAIL"} ${formatNumber(old.value)}` : "-",
        `${criterion.pass ? "PASS" : "FAIL"} ${formatNumber(criterion.value)}`,
        criterion.limit,
      ];
    }),
    ["criterion", "old", "new", "limit"],
  );
}

/**
 * The whole comparison of two summaries: both machines and settings, one table per set of
 * metrics (e.g. `[["rps", "p50", "p99"], ["ratio"]]`), then the criteria.
 */
export function printSummaryComparison(older: Summary, newer: Summary, metricSets: string[][]): void {
  printComparisonHeader(older, newer);
  for (const metrics of metricSets) {
    console.log("");
    printComparison(older, newer, metrics);
  }
  console.log("");
  printCriteriaComparison(older, newer);
}
