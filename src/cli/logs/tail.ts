/**
 * `writ logs tail`: prints the most recent decisions, then follows the log, printing each new
 * decision as the gateway appends it, until interrupted (Ctrl-C).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { matchesDecisionFilter, normalizeFilter } from "../../store/index.ts";
import {
  configOption,
  EXIT,
  filterHelp,
  filterOf,
  filterOptions,
  parseFlags,
  UsageError,
  withLog,
} from "./common.ts";
import type { CommandIo } from "./io.ts";
import { entryLine, outputFormats, tableHeader } from "./render.ts";

export const tailUsage = `usage: writ logs tail [--config f] [filters] [-n count | --from seq] [--interval ms] [--format table|ndjson]

Prints the last --lines (-n, default 10) matching decisions, or every entry from seq --from on,
then follows the log until interrupted (Ctrl-C), checking for new entries every --interval
milliseconds (default 1000).
${filterHelp}`;

const tailOptions = {
  ...configOption,
  ...filterOptions,
  lines: { type: "string", short: "n" },
  from: { type: "string" },
  interval: { type: "string" },
  format: { type: "string" },
} as const;

const tailSchema = z.object({
  lines: z.coerce.number().int().min(0).max(500).default(10),
  from: z.coerce.number().int().min(1).optional(),
  interval: z.coerce.number().int().min(50).max(60_000).default(1000),
  format: z.enum(outputFormats).default("table"),
});

const READ_BATCH = 500;

export async function tailCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseFlags(argv, tailOptions);
  if (values.help) {
    await io.out(tailUsage);
    return EXIT.ok;
  }
  const options = tailSchema.safeParse(values);
  if (!options.success || (values.from !== undefined && values.lines !== undefined)) {
    throw new UsageError(
      "-n is 0 to 500, --from a seq (1 or more), --interval 50 to 60000 ms, --format table or ndjson; give -n or --from, not both",
    );
  }
  const { lines, from, interval, format } = options.data;
  const filter = normalizeFilter(filterOf(values));
  return withLog(values.config, async ({ log, store }) => {
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
