/**
 * `writ policy …`: commands for policy authors. Each lives in `./policy/` and is imported only
 * when it runs, so that `check` or `capabilities` do not load the whole compiler.
 */

export const policyUsage = `usage: writ policy <command> [options]

commands:
  check <path>...                      parse Rego files and report syntax errors
  build <path>... -e <entrypoint>...   compile a policy to an OPA bundle (bundle.tar.gz)
  eval -d <path>... [-i input] <query> evaluate a query against sources or a bundle
  test <path>...                       run the policy's test_… rules
  capabilities                         list the builtins policies can call, as JSON

Run \`writ policy <command> --help\` for a command's options.`;

type Command = (argv: string[]) => Promise<number> | number;

const commands = new Map<string, () => Promise<Command>>([
  ["check", async () => (await import("./policy/check.ts")).checkCommand],
  ["build", async () => (await import("./policy/build.ts")).buildCommand],
  ["eval", async () => (await import("./policy/eval.ts")).evalCommand],
  ["test", async () => (await import("./policy/test.ts")).testCommand],
  ["capabilities", async () => (await import("./policy/capabilities.ts")).capabilitiesCommand],
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
