/**
 * `writ logs export`: the matching entries, oldest first, one JSON document per line — as Writ
 * stores them (`ndjson`) or as OPA decision-log events (`opa`).
 */
import { z } from "zod";
import { toOpaDecisionEvent } from "../../decisionlog/opa.ts";
import { matchesDecisionFilter, normalizeFilter } from "../../store/index.ts";
import type { DecisionFilter, DecisionLogEntry, DecisionStore } from "../../store/types.ts";
import { EXIT, filteredLogCommand, filterHelp } from "./common.ts";
import type { CommandIo } from "./io.ts";

export const exportUsage = `usage: writ logs export [--config f] [--since t] [--until t] [filters] [--format ndjson|opa]

Writes the matching decisions to standard output, oldest first, one JSON document per line:
  ndjson  the entries as Writ stores them (redacted input, reasons, grant, hash chain)
  opa     OPA decision-log events (decision_id, path, input, result, timestamp, bundles,
          metrics, erased, masked, labels, requested_by, req_id) for tools that read OPA's logs
${filterHelp}`;

const exportFormats = ["ndjson", "opa"] as const;
const READ_BATCH = 1000;

/** The entries that pass `filter`, oldest first, read in batches. */
async function* entriesOldestFirst(
  store: DecisionStore,
  filter: DecisionFilter,
): AsyncGenerator<DecisionLogEntry> {
  const normalized = normalizeFilter(filter);
  for (let from = 1; ; ) {
    const batch = await store.readDecisions(from, READ_BATCH);
    const last = batch.at(-1);
    if (last === undefined) return;
    for (const entry of batch) if (matchesDecisionFilter(entry, normalized)) yield entry;
    from = last.seq + 1;
  }
}

export function exportCommand(argv: string[], io: CommandIo): Promise<number> {
  const command = {
    usage: exportUsage,
    options: { format: { type: "string" } },
    schema: z.object({ format: z.enum(exportFormats).default("ndjson") }),
    problem: "--format is ndjson or opa",
  } as const;
  return filteredLogCommand(argv, io, command, async ({ store, filter, flags }) => {
    for await (const entry of entriesOldestFirst(store, filter)) {
      await io.out(JSON.stringify(flags.format === "opa" ? toOpaDecisionEvent(entry) : entry));
    }
    return EXIT.ok;
  });
}
