/**
 * `writ logs …`: read the decision log the gateway writes, from the same store (`--config`, as
 * `writ serve`), without SQL. Each command lives in `./logs/` and returns its exit code.
 */
import type { CommandIo } from "./logs/io.ts";
import { processIo } from "./logs/io.ts";

export const logsUsage = `usage: writ logs <command> [--config f] [options]

commands:
  tail      print recent decisions, then follow new ones until Ctrl-C
  query     decisions matching filters (subject, tenant, action, decision, reason, resource,
            time range), as a table or NDJSON, a page at a time
  show <id> one decision in full: redacted input, result, reasons, revisions, grant, approval
  explain <id>  why the policy decided it: the rules that produced the result, with the lines and
            values that made them hold (the archived revision, built instrumented)
  verify    walk the hash chain and check it against the signed checkpoints of its head (and a
            witness's with --witness); exit 0 only when intact, 1 naming what is broken
  export    matching decisions since/until a time, as NDJSON or OPA decision-log events

Run \`writ logs <command> --help\` for a command's options.`;

type LogsCommand = (argv: string[], io: CommandIo) => Promise<number>;

const commands = new Map<string, () => Promise<{ run: LogsCommand; usage: string }>>([
  ["tail", async () => import("./logs/tail.ts").then((m) => ({ run: m.tailCommand, usage: m.tailUsage }))],
  [
    "query",
    async () => import("./logs/query.ts").then((m) => ({ run: m.queryCommand, usage: m.queryUsage })),
  ],
  ["show", async () => import("./logs/show.ts").then((m) => ({ run: m.showCommand, usage: m.showUsage }))],
  [
    "explain",
    async () => import("./logs/explain.ts").then((m) => ({ run: m.explainCommand, usage: m.explainUsage })),
  ],
  [
    "verify",
    async () => import("./logs/verify.ts").then((m) => ({ run: m.verifyCommand, usage: m.verifyUsage })),
  ],
  [
    "export",
    async () => import("./logs/export.ts").then((m) => ({ run: m.exportCommand, usage: m.exportUsage })),
  ],
]);

/** Runs `writ logs <argv>`; `io` defaults to the process's stdout, stderr and Ctrl-C. */
export async function logsCommand(argv: string[], io?: CommandIo): Promise<number> {
  const own = io === undefined ? processIo() : undefined;
  const using = io ?? own!;
  try {
    return await runLogs(argv, using);
  } finally {
    own?.close();
  }
}

async function runLogs(argv: string[], io: CommandIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "help" || sub === "--help" || sub === "-h") {
    await io.out(logsUsage);
    return 0;
  }
  const load = sub === undefined ? undefined : commands.get(sub);
  if (!load) {
    io.err(
      sub === undefined ? logsUsage : `writ logs: unknown command ${JSON.stringify(sub)}\n\n${logsUsage}`,
    );
    return 2;
  }
  const { run, usage } = await load();
  const { reportError } = await import("./logs/common.ts");
  try {
    return await run(rest, io);
  } catch (error) {
    return reportError(io, `writ logs ${sub}`, usage, error);
  }
}
