/** `writ logs show <id>`: one entry in full — redacted input, result, reasons, revisions, timings. */
import { EXIT, oneDecisionFlags, withLog } from "./common.ts";
import type { CommandIo } from "./io.ts";
import { entryReport } from "./render.ts";

export const showUsage = `usage: writ logs show [--config f] [--format text|json] <decision-id>

Prints one decision-log entry in full: the stored (redacted) input, the policy's result and
reasons, the policy and resource revisions, the grant, the approval, what was erased or masked,
timings and its place in the hash chain. Exit code 1 when no entry has that id.`;

export async function showCommand(argv: string[], io: CommandIo): Promise<number> {
  const flags = await oneDecisionFlags(argv, io, showUsage);
  if (typeof flags === "number") return flags;
  const { config, format, id } = flags;
  return withLog(config, async ({ log }) => {
    const entry = await log.get(id);
    if (entry === undefined) {
      io.err(`writ logs show: no decision ${id}\n  next: find its id with writ logs query`);
      return EXIT.failed;
    }
    await io.out(format === "json" ? JSON.stringify(entry, null, 2) : entryReport(entry));
    return EXIT.ok;
  });
}
