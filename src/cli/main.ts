/**
 * The `writ` command line. Each command returns its exit code; nothing here calls process.exit,
 * so the same functions run in tests.
 */
import { policyCommand } from "./policy.ts";

const commands: Record<string, () => Promise<(argv: string[]) => Promise<number>>> = {
  serve: async () => (await import("./serve.ts")).serveCommand,
  token: async () => (await import("./token.ts")).tokenCommand,
  demo: async () => (await import("../demo/replay.ts")).demoCommand,
  config: async () => (await import("./config.ts")).configCommand,
  logs: async () => (await import("./logs.ts")).logsCommand,
};

const usage = `usage: writ <command> [options]

commands:
  serve [--config f] [--port n]  run the gateway (default config: SQLite, policies/, the demo tools)
  token --sub <id> [--roles a,b] print a subject JWT from the development issuer
  demo                     replay the demo repair and its refusals against a running gateway
  config schema|check      the configuration's JSON Schema (editor completion), or validate a file
  logs tail|query|show|verify|export   read, follow, verify and export the decision log
  policy check <path>...   parse Rego files (or every .rego file under a folder) and report errors
  policy build <path>...   compile a policy to an OPA bundle for the Wasm target
  policy eval <query>      evaluate a query against policy sources or a bundle
  policy test <path>...    run a policy's test_… rules
  policy capabilities      list the builtins policies can call
  help                     show this text

Run \`writ policy <command> --help\` or \`writ logs <command> --help\` for a command's options.`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const load = command === undefined ? undefined : commands[command];
  if (load) return (await load())(rest);
  switch (command) {
    case "policy":
      return policyCommand(rest);
    case undefined:
    case "help":
    case "--help":
    case "-h":
      console.log(usage);
      return command === undefined ? 2 : 0;
    default:
      console.error(`writ: unknown command ${JSON.stringify(command)}\n\n${usage}`);
      return 2;
  }
}
