/**
 * The `writ` command line. Each command returns its exit code; nothing here calls process.exit,
 * so the same functions run in tests. `writ help` lists every command with every option (a test
 * holds it to each command's own --help); it loads no command module, so it answers at once.
 */
const commands: Record<string, () => Promise<(argv: string[]) => Promise<number>>> = {
  serve: async () => (await import("./serve.ts")).serveCommand,
  token: async () => (await import("./token.ts")).tokenCommand,
  tools: async () => (await import("./tools.ts")).toolsCommand,
  demo: async () => (await import("../demo/replay.ts")).demoCommand,
  config: async () => (await import("./config.ts")).configCommand,
  logs: async () => (await import("./logs.ts")).logsCommand,
  contracts: async () => (await import("./contracts.ts")).contractsCommand,
  policy: async () => (await import("./policy.ts")).policyCommand,
};

const usage = `usage: writ <command> [options]      (writ <command> --help: one command in full)

run Writ
  serve [--config <file>] [--port <n>]
      run the gateway; without --config the embedded default (SQLite under .writ/, the sample
      policies, the demo tools). PORT in the environment also sets the port.
  token --sub <id> [--tenant <t>] [--roles a,b] [--scopes x,y] [--ttl <seconds>] [--config <file>]
      print a subject JWT from the development issuer (tenant "demo", one hour by default)
  tools --as <token or claims> [--config <file>] [--family <f>] [--format text|json]
      the tools a caller would see in discovery (GET /v1/tools, MCP tools/list), and why:
      --as a bearer JWT, or claims as JSON ('{"sub": "alice", "tnt": "demo"}')
  demo [--url <gateway url>] [--config <file>]
      replay the demo repair and its refusals against a running gateway (--url, else PORT,
      else the configured port on 127.0.0.1)
  config schema
      print the configuration's JSON Schema (editor completion)
  config check [--config <file>]
      validate a configuration file (default: the embedded one)

read the decision log (every logs command takes --config <file>, as serve)
  logs tail [filters] [-n, --lines <count> | --from <seq>] [--interval <ms>] [--format table|ndjson]
  logs query [filters] [--limit <n>] [--cursor <c>] [--format table|ndjson] [--wide]
  logs show [--format text|json] <decision-id>
  logs explain [--format text|json] <decision-id>
  logs verify [--format text|json] [--witness <file|url>]... [--keys <file|url>]
  logs export [--since <t>] [--until <t>] [filters] [--format ndjson|opa]
      filters: --subject <id> --tenant <t> --action <name> --reason <code>
               --decision allow|deny|require_approval|allow_with_conditions|error
               --resource <type>/<id> (or --resource-type <type> --resource-id <id>) --path <path>
               --run <run-id> (a Code Mode run and its calls)
               --since <time> --until <time>

write policies
  policy check [-S, --strict] <path>...
  policy fmt [-w, --write | -l, --list | -d, --diff] [--fail | --check] [--drop-v0-imports] [<path>...]
             [--v0-v1 [--v1-compatible] | --v0-compatible]
      format Rego files as opa fmt does (without a path: standard input to standard output);
      --v0-v1 rewrites Rego v0 as v1
  policy build <path>... -e, --entrypoint <rule>... [-o, --output <bundle.tar.gz>] [--data <file>]...
               [-r, --revision <text>] [--no-budget]
  policy eval -d, --data <path>... [-i, --input <input.json>] [--strict-builtin-errors] '<query>'
  policy test <path>... [-v, --verbose] [--run <regex>] [--format pretty|json] [--coverage]
               [-z, --exit-zero-on-skipped] [--fail-on-empty]
  policy capabilities [--format writ|opa]
      the builtins policies can call (opa: a file for opa check --capabilities, Regal)
  every policy command above: [--builtins <module.mjs>]... (custom builtins)
  check, build, eval and test: [--v0-compatible] (Rego v0 sources, as opa --v0-compatible)
  check and test: [--config <file>] (default ./writ.yaml: warn when the policy it serves would
      show no tool in discovery)

front an MCP server
  contracts import (--stdio "<command line>" | --url <url> [--header "Name: value"]...) [--name <server>]
                   [--out <dir> | --check <file|dir>] [--timeout <ms>]
      contracts from the server's own tools/list (and resources, prompts); --check reports drift
      (exit 1), for CI

change policies safely (both read the store --config names, as logs)
  policy revisions [--config <file>] [--limit <n>] [--cursor <c>] [--format table|json] [<id>]
      the policy revisions the gateway loaded, newest first; with an id, one with its sources
  policy replay --policy <dir|bundle|url> [--config <file>] [filters] [--limit <n>]
                [--format table|json] [--fail-on-change]
      re-run logged decisions against a candidate policy: what would change (exit 1 with
      --fail-on-change when an outcome changes)

  help [<command>]   this text, or one command's --help
  --version          Writ's version`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const load = command === undefined ? undefined : commands[command];
  if (load) return (await load())(rest);
  switch (command) {
    case "help":
      if (rest.length > 0) return main([...rest, "--help"]);
      console.log(usage);
      return 0;
    case "--help":
    case "-h":
      console.log(usage);
      return 0;
    case "--version":
    case "-v":
      console.log(await version());
      return 0;
    case undefined:
      console.error(usage);
      return 2;
    default:
      console.error(`writ: unknown command ${JSON.stringify(command)}\n\n${usage}`);
      return 2;
  }
}

/** The version in the package's package.json (two folders up, from src/cli or dist/cli). */
async function version(): Promise<string> {
  const { readFile } = await import("node:fs/promises");
  const text = await readFile(new URL("../../package.json", import.meta.url), "utf8");
  const parsed: unknown = JSON.parse(text);
  return typeof parsed === "object" &&
    parsed !== null &&
    "version" in parsed &&
    typeof parsed.version === "string"
    ? parsed.version
    : "unknown";
}
