/**
 * `writ logs tail`: prints the most recent decisions, then follows the log, printing each new
 * decision as the gateway appends it, until interrupted (Ctrl-C).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { matchesDecisionFilter, normalizeFilter } from "../../store/index.ts";
import { EXIT, filteredLogCommand, filterHelp } from "./common.ts";
import type { CommandIo } from "./io.ts";
import { entryLine, outputFormats, tableHeader } from "./render.ts";

export const tailUsage = `usage: writ logs tail [--config f] [filters] [-n count | --from seq] [--interval ms] [--format table|ndjson]

Prints the last --lines (-n, default 10) matching decisions, or every entry from seq --from on,
then follows the log until interrupted (Ctrl-C), checking for new entries every --interval
milliseconds (default 1000).
${filterHelp}`;

const tailSchema = z
  .object({
    lines: z.coerce.number().int().min(0).max(500).optional(),
    from: z.coerce.number().int().min(1).optional(),
    interval: z.coerce.number().int().min(50).max(60_000).default(1000),
    format: z.enum(outputFormats).default("table"),
  })
  .refine((flags) => flags.from === undefined || flags.lines === undefined);

const READ_BATCH = 500;

export function tailCommand(argv: string[], io: CommandIo): Promise<number> {
  const command = {
    usage: tailUsage,
    options: {
      lines: { type: "string", short: "n" },
      from: { type: "string" },
      interval: { type: "string" },
      format: { type: "string" },
    },
    schema: tailSchema,
    problem:
      "-n is 0 to 500, --from a seq (1 or more), --interval 50 to 60000 ms, --format table or ndjson; give -n or --from, not both",
  } as const;
  return filteredLogCommand(argv, io, command, async ({ log, store, filter: given, flags }) => {
    const { lines = 10, from, interval, format } = flags;
    const filter = normalizeFilter(given);
    if (format === "table") await io.out(tableHeader());
    let next: number;
    if (from !== undefined) {
      next = from;
    } else {
      const newest = (await log.query({}, 1)).entries[0]?.seq ?? 0;
      const recent = lines === 0 ? [] : (await log.query(filter, lines)).entries.reverse();
      for (const entry of recent) await io.out(entryLine(entry, format));
      next = newest + 1;
    }
    while (!io.signal.aborted) {
      const batch = await store.readDecisions(next, READ_BATCH);
      for (const entry of batch) {
        if (matchesDecisionFilter(entry, filter)) await io.out(entryLine(entry, format));
        next = entry.seq + 1;
      }
      if (batch.length < READ_BATCH) await sleep(interval, undefined, { signal: io.signal }).catch(() => {});
    }
    return EXIT.ok;
  });
}
