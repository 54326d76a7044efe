/**
 * `writ policy …`: commands for policy authors. Each lives in `./policy/` and is imported only
 * when it runs, so that `check` or `capabilities` do not load the whole compiler.
 */
import type { CommandIo } from "./logs/io.ts";
import { processIo } from "./logs/io.ts";

export const policyUsage = `usage: writ policy <command> [options]

commands:
  check <path>...                      compile Rego files and report their errors, as opa check
  fmt <path>...                        format Rego files as opa fmt does (-w, -l, -d)
  build <path>... -e <entrypoint>...   compile a policy to an OPA bundle (bundle.tar.gz)
  eval -d <path>... [-i input] <query> evaluate a query against sources or a bundle
  test <path>...                       run the policy's test_… rules
  capabilities                         list the builtins policies can call, as JSON
  revisions [<id>]                     the policy revisions the gateway loaded (from its store)
  replay --policy <dir|bundle>         re-run logged decisions against a candidate policy

Run \`writ policy <command> --help\` for a command's options.`;

type Command = (argv: string[]) => Promise<number> | number;
type StoreCommand = (argv: string[], io: CommandIo) => Promise<number>;

/**
 * A command that reads the gateway's store (`--config`, as `writ logs`): run with the process's
 * output, its errors reported as `writ logs` reports them (usage 2, unreadable store 3).
 */
function withIo(name: string, usage: string, run: StoreCommand): Command {
  return async (argv) => {
    const io = processIo();
    try {
      return await run(argv, io);
    } catch (error) {
      const { reportError } = await import("./logs/common.ts");
      return reportError(io, `writ policy ${name}`, usage, error);
    } finally {
      io.close();
    }
  };
}

const commands = new Map<string, () => Promise<Command>>([
  ["check", async () => (await import("./policy/check.ts")).checkCommand],
  ["fmt", async () => (await import("./policy/fmt.ts")).fmtCommand],
  ["build", async () => (await import("./policy/build.ts")).buildCommand],
  ["eval", async () => (await import("./policy/eval.ts")).evalCommand],
  ["test", async () => (await import("./policy/test.ts")).testCommand],
  ["capabilities", async () => (await import("./policy/capabilities.ts")).capabilitiesCommand],
  [
    "revisions",
    async () => {
      const m = await import("./policy/revisions.ts");
      return withIo("revisions", m.revisionsUsage, m.revisionsCommand);
    },
  ],
  [
    "replay",
    async () => {
      const m = await import("./policy/replay.ts");
      return withIo("replay", m.replayUsage, m.replayCommand);
    },
  ],
]);

export async function policyCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "help" || sub === "--help" || sub === "-h") {
    console.log(policyUsage);
    return 0;
  }
  const load = sub === undefined ? undefined : commands.get(sub);
  if (!load) {
    console.error(
      sub === undefined
        ? policyUsage
        : `writ policy: unknown command ${JSON.stringify(sub)}\n\n${policyUsage}`,
    );
    return 2;
  }
  const run = await load();
  return run(rest);
}
