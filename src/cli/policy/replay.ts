/**
 * `writ policy replay --policy <dir|bundle>`: what a candidate policy would have decided for the
 * decisions in the log (read from the configured store, as `writ logs`, read-only), and what
 * would change. The logic is `src/replay/`; this prints it.
 */
import { z } from "zod";
import { errorMessage } from "../../core/errors.ts";
import { compiledCacheBeside } from "../../policy/compiled-cache.ts";
import { PolicyLoadError } from "../../policy/index.ts";
import {
  ARROW,
  loadCandidate,
  Replay,
  type ReplayAnswer,
  type ReplayedDecision,
  type ReplayResult,
  type ReplaySummary,
  type UnreplayableDecision,
} from "../../replay/index.ts";
import { postgresSettings } from "../../store/index.ts";
import { EXIT, filteredLogCommand, filterHelp } from "../logs/common.ts";
import type { CommandIo } from "../logs/io.ts";

export const replayUsage = `usage: writ policy replay --policy <dir|bundle.tar.gz|url> [--config f] [filters]
                         [--limit n] [--format table|json] [--fail-on-change]

Re-runs the logged inputs of past decisions (the policy evaluations among the entries matching
the filters, newest first) against a candidate policy, and reports what would change: counts by
old outcome → new outcome, every decision whose outcome changes (its id, reasons before and
after), and the entries that cannot be replayed exactly (their input was redacted before it was
logged: replayed over what was kept, listed with the pointers erased or masked, never counted as
a change; when the revision that decided it is archived, it is run over the same kept input too,
so that only a disagreement of the two policies shows as a possible change) or at all (no input). The log is read from the store --config names (as writ serve);
nothing is written.

options:
  --policy <path>     the candidate: a policy folder, a bundle file, or a bundle server's URL
  --limit <n>         replay at most the n newest matching decisions
  --format table|json table (default): one line per changed or inexact decision, then counts;
                      json: one document {candidate, summary, changed, inexact, not_replayable}
  --fail-on-change    exit 1 when any decision replayed exactly changes outcome (a CI gate)
exit codes: 0 done (nothing changed, or no --fail-on-change), 1 changes with --fail-on-change
or a candidate that does not load, 2 usage, 3 configuration or store unreadable
${filterHelp}`;

const replaySchema = z.object({
  policy: z.string().min(1),
  limit: z.coerce.number().int().positive().optional(),
  format: z.enum(["table", "json"]).default("table"),
  "fail-on-change": z.boolean().default(false),
});

export function replayCommand(argv: string[], io: CommandIo): Promise<number> {
  const command = {
    usage: replayUsage,
    options: {
      policy: { type: "string" },
      limit: { type: "string" },
      format: { type: "string" },
      "fail-on-change": { type: "boolean" },
    },
    schema: replaySchema,
    problem: (values: Record<string, unknown>) =>
      values.policy === undefined
        ? "name the candidate policy with --policy <dir|bundle>"
        : "--limit is a positive integer; --format is table or json",
  } as const;
  return filteredLogCommand(argv, io, command, async ({ store, config, filter, flags: args }) => {
    // A candidate replayed again (CI, a policy author's edits) is compiled once.
    const compiledCache = compiledCacheBeside(
      postgresSettings(config.store) ? undefined : config.store.sqlite,
    );
    let candidate: Awaited<ReturnType<typeof loadCandidate>>;
    try {
      candidate = await loadCandidate(args.policy, {
        entrypoint: config.policy.entrypoint,
        timeBudgetMs: config.policy.time_budget_ms,
        regoVersion: config.policy.rego_version,
        compiledCache,
      });
    } catch (error) {
      if (!(error instanceof PolicyLoadError)) throw error;
      io.err(
        `writ policy replay: the candidate does not load: ${errorMessage(error)}\n  next: fix it (writ policy check, writ policy test)`,
      );
      return EXIT.failed;
    }
    const replay = new Replay(store, candidate, {
      filter,
      ...(args.limit === undefined ? {} : { limit: args.limit }),
      signal: io.signal,
      // Redacted inputs are also run through the revision that decided them, when archived.
      archive: { store, compiledCache },
    });
    const report = args.format === "json" ? new JsonReport() : new TableReport(io);
    for await (const result of replay) await report.add(result);
    await report.end(io, { source: args.policy, revision: candidate.revision ?? "none" }, replay.summary);
    return args["fail-on-change"] && replay.summary.changed > 0 ? EXIT.failed : EXIT.ok;
  });
}

interface Report {
  add(result: ReplayResult): Promise<void>;
  end(io: CommandIo, candidate: { source: string; revision: string }, summary: ReplaySummary): Promise<void>;
}

/** One document at the end: the candidate, the counts, and the decisions worth a look. */
class JsonReport implements Report {
  readonly changed: ReplayedDecision[] = [];
  readonly inexact: ReplayedDecision[] = [];
  readonly notReplayable: UnreplayableDecision[] = [];

  async add(result: ReplayResult): Promise<void> {
    if (result.kind === "not_replayable") this.notReplayable.push(result);
    else if (!result.exact) this.inexact.push(result);
    else if (result.changed) this.changed.push(result);
  }

  async end(io: CommandIo, candidate: { source: string; revision: string }, summary: ReplaySummary) {
    const { changed, inexact, notReplayable } = this;
    await io.out(
      JSON.stringify({ candidate, summary, changed, inexact, not_replayable: notReplayable }, null, 2),
    );
  }
}

const widths = [10, 26, 18, 20, 30, 0];

function row(cells: readonly string[]): string {
  return cells
    .map((cell, i) => {
      const width = widths[i] ?? 0;
      if (width === 0) return cell;
      return (cell.length > width - 1 ? `${cell.slice(0, width - 2)}…` : cell).padEnd(width);
    })
    .join("");
}

const codes = (a: ReplayAnswer) => a.reasons.map((r) => r.code).join(",") || "-";

/** A line per changed, inexact or unreplayable decision as it comes, then the counts. */
class TableReport implements Report {
  #header = false;
  readonly #io: CommandIo;

  constructor(io: CommandIo) {
    this.#io = io;
  }

  async add(result: ReplayResult): Promise<void> {
    if (result.kind === "replayed" && result.exact && !result.changed) return;
    if (!this.#header) {
      this.#header = true;
      await this.#io.out(row(["STATUS", "TIME", "SUBJECT", "ACTION", "BEFORE → AFTER", "DECISION ID / WHY"]));
    }
    if (result.kind === "not_replayable") {
      await this.#io.out(
        row(["no input", result.timestamp, "-", "-", "-", `${result.decision_id}  the entry holds no input`]),
      );
      return;
    }
    const r = result;
    const status = r.exact ? "changed" : "inexact";
    const transition = `${r.before.decision}${ARROW}${r.after.decision}`;
    const subject = `${r.tenant ?? "-"}/${r.subject ?? "-"}`;
    const redacted = [
      ...(r.erased.length > 0 ? [`erased ${r.erased.join(" ")}`] : []),
      ...(r.masked.length > 0 ? [`masked ${r.masked.join(" ")}`] : []),
    ];
    const baseline =
      r.baseline === undefined ? "" : `; its revision over the kept input: ${r.baseline.decision}`;
    const why = `reasons ${codes(r.before)}${ARROW}${codes(r.after)}${redacted.length > 0 ? `; input redacted: ${redacted.join("; ")}` : ""}${baseline}`;
    await this.#io.out(
      row([status, r.timestamp, subject, r.action ?? "-", transition, `${r.decision_id}  ${why}`]),
    );
  }

  async end(io: CommandIo, candidate: { source: string; revision: string }, s: ReplaySummary) {
    if (this.#header) await io.out("");
    await io.out(`candidate ${candidate.source} (revision ${candidate.revision})`);
    await io.out(
      `replayed ${s.considered} decision${s.considered === 1 ? "" : "s"}: ${s.exact} exactly, ${s.inexact.count} over a redacted input, ${s.not_replayable} without input`,
    );
    await io.out(`changed: ${s.changed}`);
    if (s.inexact.count > 0) {
      await io.out(
        `over redacted inputs: ${s.inexact.changed} of ${s.inexact.count} may have changed (${s.inexact.baselined} compared with the archived revision that decided them, over the same input)`,
      );
    }
    const lines = Object.entries(s.transitions).sort(([a], [b]) => a.localeCompare(b));
    if (lines.length > 0) await io.out("outcomes (before → after, exact replays):");
    for (const [transition, count] of lines) await io.out(`  ${transition.padEnd(48)}${count}`);
    const inexact = Object.entries(s.inexact.transitions).sort(([a], [b]) => a.localeCompare(b));
    if (inexact.length > 0) await io.out("outcomes over redacted inputs (may differ):");
    for (const [transition, count] of inexact) await io.out(`  ${transition.padEnd(48)}${count}`);
  }
}
