/** `writ policy capabilities`: the builtins Writ's compiler knows, as JSON. */
import { parseArgs } from "node:util";
import { builtins } from "../../rego/builtins/catalog.ts";
import { helpOption, parseCommandArgs, usageError } from "./args.ts";

const command = "writ policy capabilities";

export const capabilitiesUsage = `usage: writ policy capabilities

Prints the builtins Writ policies can call, as a JSON array of {"name", "arity",
"implementation"}: "native" runs inside the policy module, "host" is called through the SDK,
"unavailable" is known (so tests can replace it with \`with\`) but cannot be called for real.

options:
  -h, --help   show this text`;

export function capabilitiesCommand(argv: string[]): number {
  const parsed = parseCommandArgs(command, capabilitiesUsage, () =>
    parseArgs({ args: argv, options: { ...helpOption }, allowPositionals: true, strict: true }),
  );
  if (typeof parsed === "number") return parsed;
  if (parsed.positionals.length > 0) {
    return usageError(command, `unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  }
  const list = [...builtins.values()].map(({ name, arity, implementation }) => ({
    name,
    arity,
    implementation,
  }));
  console.log(JSON.stringify(list, null, 2));
  return 0;
}
