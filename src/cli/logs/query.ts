/** `writ logs query`: the entries matching the filter flags, newest first, a page at a time. */
import { z } from "zod";
import { MAX_PAGE_SIZE } from "../../store/index.ts";
import { EXIT, filteredLogCommand, filterHelp } from "./common.ts";
import type { CommandIo } from "./io.ts";
import { entryLine, outputFormats, table } from "./render.ts";

export const queryUsage = `usage: writ logs query [--config f] [filters] [--limit n] [--cursor c] [--format table|ndjson] [--wide]

Prints the decisions matching the filters, newest first. When more match than --limit (default
50, at most ${MAX_PAGE_SIZE}), the cursor of the next page is printed on standard error. In a
terminal the table fits its width (long subjects, actions, resources and reasons are cut with
"…"; --wide shows them whole); piped or redirected, nothing is cut.
${filterHelp}`;

const pagingSchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(50),
  cursor: z.string().min(1).optional(),
  format: z.enum(outputFormats).default("table"),
  wide: z.boolean().default(false),
});

export function queryCommand(argv: string[], io: CommandIo): Promise<number> {
  const command = {
    usage: queryUsage,
    options: {
      limit: { type: "string" },
      cursor: { type: "string" },
      format: { type: "string" },
      wide: { type: "boolean" },
    },
    schema: pagingSchema,
    problem: `--limit is 1 to ${MAX_PAGE_SIZE}; --format is table or ndjson`,
  } as const;
  return filteredLogCommand(argv, io, command, async ({ log, filter, flags }) => {
    const { limit, cursor, format, wide } = flags;
    const page = await log.query(filter, limit, cursor);
    if (format === "table") {
      for (const line of table(page.entries, wide ? undefined : io.columns)) await io.out(line);
    } else for (const entry of page.entries) await io.out(entryLine(entry, format));
    if (page.next_cursor !== undefined) {
      io.err(`more entries match: add --cursor ${page.next_cursor} for the next page`);
    }
    return EXIT.ok;
  });
}
