/**
 * Runs conformance cases through one stage of the compiler and tallies the outcomes per top-level
 * folder. A stage is a function from a case to an outcome, so the parse stage and the eval stage
 * share the walking, skipping, counting and reporting.
 */
import type { BrokenCaseFile, LoadedCase } from "./cases.ts";

export type CaseOutcome =
  | { status: "passed" }
  | { status: "failed"; reason: string }
  | { status: "skipped"; reason: string };

export type Stage = (loaded: LoadedCase) => CaseOutcome | Promise<CaseOutcome>;

export interface Tally {
  passed: number;
  failed: number;
  skipped: number;
}

export interface CaseFailure {
  file: string;
  note: string;
  reason: string;
}

export interface ConformanceReport extends Tally {
  total: number;
  by_dir: Record<string, Tally>;
  failures: CaseFailure[];
}

export interface RunOptions {
  /** Notes (`<folder>/<note>`) to skip, with the reason. */
  exceptions?: ReadonlyMap<string, string>;
}

function emptyTally(): Tally {
  return { passed: 0, failed: 0, skipped: 0 };
}

async function runOne(stage: Stage, loaded: LoadedCase): Promise<CaseOutcome> {
  try {
    return await stage(loaded);
  } catch (error) {
    // A stage that throws has a bug, and the case counts as failed with the message, so one
    // crash never hides the rest of the scoreboard.
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return { status: "failed", reason: `stage crashed: ${message}` };
  }
}

export async function runConformance(
  stage: Stage,
  cases: readonly LoadedCase[],
  broken: readonly BrokenCaseFile[],
  options: RunOptions = {},
): Promise<ConformanceReport> {
  const byDir = new Map<string, Tally>();
  const failures: CaseFailure[] = [];
  const tallyFor = (dir: string): Tally => {
    let tally = byDir.get(dir);
    if (!tally) {
      tally = emptyTally();
      byDir.set(dir, tally);
    }
    return tally;
  };

  for (const file of broken) {
    tallyFor(file.dir).failed++;
    failures.push({ file: file.file, note: "(whole file)", reason: file.reason });
  }

  for (const loaded of cases) {
    const exception = options.exceptions?.get(loaded.case.note);
    const outcome: CaseOutcome =
      exception !== undefined ? { status: "skipped", reason: exception } : await runOne(stage, loaded);
    const tally = tallyFor(loaded.dir);
    tally[outcome.status]++;
    if (outcome.status === "failed") {
      failures.push({ file: loaded.file, note: loaded.case.note, reason: outcome.reason });
    }
  }

  const dirs = [...byDir.keys()].sort();
  const total = emptyTally();
  const by_dir: Record<string, Tally> = {};
  for (const dir of dirs) {
    const tally = byDir.get(dir)!;
    by_dir[dir] = tally;
    total.passed += tally.passed;
    total.failed += tally.failed;
    total.skipped += tally.skipped;
  }
  return { total: total.passed + total.failed + total.skipped, ...total, by_dir, failures };
}

function percent(tally: Tally): string {
  const ran = tally.passed + tally.failed;
  return ran === 0 ? "-" : `${((100 * tally.passed) / ran).toFixed(1)}%`;
}

/** A plain-text table, one row per folder, closing with `N passed, N failed, N skipped`. */
export function formatReport(report: ConformanceReport): string {
  const rows = Object.entries(report.by_dir).map(([dir, t]) => [
    dir,
    String(t.passed),
    String(t.failed),
    String(t.skipped),
    percent(t),
  ]);
  const header = ["folder", "passed", "failed", "skipped", "pass rate"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [
    line(header),
    ...rows.map(line),
    "",
    `pass rate ${percent(report)} of cases run`,
    `${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped`,
  ].join("\n");
}
