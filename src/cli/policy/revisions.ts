/**
 * `writ policy revisions [<id>]`: the policy revisions the gateway loaded, read from its store
 * (`--config`, as `writ serve`): a table (or JSON) newest first, or one revision with its sources.
 */
import { z } from "zod";
import { revisionDocument } from "../../policy/index.ts";
import { MAX_PAGE_SIZE } from "../../store/index.ts";
import type { PolicyRevisionInfo } from "../../store/types.ts";
import { configOption, EXIT, parseFlags, UsageError, withLog } from "../logs/common.ts";
import type { CommandIo } from "../logs/io.ts";
import { formatBytes } from "./output.ts";

export const revisionsUsage = `usage: writ policy revisions [--config f] [--limit n] [--cursor c] [--format table|json] [<id>]

Lists the policy revisions the gateway loaded (each is archived in its store when loaded: the
first load, every reload), newest first: id, when first loaded, kind (directory or bundle),
size and where from. With an id, prints that revision in full as JSON, with its sources.
When more revisions exist than --limit (default 50, at most ${MAX_PAGE_SIZE}), the cursor of the
next page is printed on standard error. Exit code 1 when no revision has that id.`;

const listSchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(50),
  cursor: z.string().min(1).optional(),
  format: z.enum(["table", "json"]).default("table"),
});

const widths = [18, 26, 11, 11, 0];

function row(cells: readonly string[]): string {
  return cells
    .map((cell, i) => cell.padEnd(widths[i] ?? 0))
    .join("")
    .trimEnd();
}

const cells = (r: PolicyRevisionInfo) => [r.id, r.loaded_at, r.kind, formatBytes(r.size), r.origin];

export async function revisionsCommand(argv: string[], io: CommandIo): Promise<number> {
  const options = {
    ...configOption,
    limit: { type: "string" },
    cursor: { type: "string" },
    format: { type: "string" },
  } as const;
  const { values, positionals } = parseFlags(argv, options, true);
  if (values.help) {
    await io.out(revisionsUsage);
    return EXIT.ok;
  }
  const parsed = listSchema.safeParse(values);
  if (!parsed.success || positionals.length > 1) {
    throw new UsageError(`--limit is 1 to ${MAX_PAGE_SIZE}; --format is table or json; at most one id`);
  }
  const { limit, cursor, format } = parsed.data;
  const id = positionals[0];
  return withLog(values.config, async ({ store }) => {
    if (id !== undefined) {
      const record = await store.getPolicyRevision(id);
      if (record === undefined) {
        io.err(
          `writ policy revisions: no revision ${id} is archived\n  next: list them with writ policy revisions`,
        );
        return EXIT.failed;
      }
      await io.out(JSON.stringify(await revisionDocument(record), null, 2));
      return EXIT.ok;
    }
    const page = await store.listPolicyRevisions(limit, cursor);
    if (format === "json") await io.out(JSON.stringify(page, null, 2));
    else {
      await io.out(row(["ID", "LOADED AT", "KIND", "SIZE", "ORIGIN"]));
      for (const r of page.revisions) await io.out(row(cells(r)));
    }
    if (page.next_cursor !== undefined) {
      io.err(`more revisions: add --cursor ${page.next_cursor} for the next page`);
    }
    return EXIT.ok;
  });
}
