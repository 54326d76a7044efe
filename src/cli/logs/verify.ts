/**
 * `writ logs verify`: walks the hash chain from the first entry. Exit code 0 only when it is
 * intact, 1 naming the first broken entry, 3 when the log cannot be read at all.
 */
import { z } from "zod";
import { configOption, EXIT, parseFlags, UsageError, withLog } from "./common.ts";
import type { CommandIo } from "./io.ts";
import { verifySummary } from "./render.ts";

export const verifyUsage = `usage: writ logs verify [--config f] [--format text|json]

Checks every entry of the decision log: seqs run 1, 2, 3… without gaps, each entry links to the
previous entry's hash, and each hash matches the entry's content.
Exit codes: 0 intact, 1 broken (the first broken entry is named), 2 usage, 3 cannot read the log.`;

const formatSchema = z.enum(["text", "json"]).default("text");

export async function verifyCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseFlags(argv, { ...configOption, format: { type: "string" } });
  if (values.help) {
    await io.out(verifyUsage);
    return EXIT.ok;
  }
  const format = formatSchema.safeParse(values.format);
  if (!format.success) throw new UsageError("--format is text or json");
  return withLog(values.config, async ({ log }) => {
    const result = await log.verify();
    await io.out(format.data === "json" ? JSON.stringify(result) : verifySummary(result));
    if (!result.ok) {
      io.err(
        `writ logs verify: the decision log is not trustworthy from seq ${result.first_broken.seq} on\n  next: compare with a backup or an exported copy (writ logs export) to see what changed, and restore the store from the backup`,
      );
      return EXIT.failed;
    }
    if (result.entries === 0) {
      io.err(
        "writ logs verify: the log is empty\n  next: check that --config names the store the gateway writes",
      );
    }
    return EXIT.ok;
  });
}
