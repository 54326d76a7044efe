/**
 * `writ config schema` prints the JSON Schema of the configuration file, for editor completion
 * (e.g. `# yaml-language-server: $schema=writ.schema.json` at the top of a YAML file).
 * `writ config check [--config file]` validates a configuration and says what is wrong.
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { ConfigError, gatewayConfigSchema, loadConfig } from "../config/index.ts";
import { CompiledContractRegistry } from "../contracts/index.ts";
import { WritError } from "../core/errors.ts";

const usage = `usage: writ config schema            print the JSON Schema of the configuration file
       writ config check [--config f]  validate a configuration file (default: the embedded one)

options:
  --config <file>   the configuration to check (YAML), as \`writ serve --config\`
  -h, --help        show this text`;

export async function configCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === "help") {
    console.log(usage);
    return 0;
  }
  let values: { config?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: rest,
      options: { config: { type: "string" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (error) {
    console.error(
      `writ config ${sub}: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`,
    );
    return 2;
  }
  if (values.help) {
    console.log(usage);
    return 0;
  }
  if (sub === "schema") {
    if (values.config !== undefined) {
      console.error(
        `writ config schema: takes no --config (the schema is the same for every file)\n\n${usage}`,
      );
      return 2;
    }
    const schema = z.toJSONSchema(gatewayConfigSchema, { io: "input", unrepresentable: "any" });
    console.log(JSON.stringify({ title: "Writ gateway configuration", ...schema }, null, 2));
    return 0;
  }
  if (sub === "check") {
    const file = values.config;
    try {
      const config = await loadConfig(file);
      // What `writ serve` would refuse too: the contracts' JSON Schemas must compile.
      new CompiledContractRegistry(config.tools, { pointer: "/tools" });
      console.log(
        `configuration is valid: ${config.tools.length} tool contract(s), policy in ${config.policy.bundle ?? config.policy.dir}`,
      );
      return 0;
    } catch (error) {
      if (error instanceof ConfigError) {
        console.error(error.message);
        return 1;
      }
      if (error instanceof WritError) {
        console.error(
          `${error.message}\n${error.fieldErrors.map((f) => `  ${f.path}: ${f.message}`).join("\n")}`,
        );
        console.error(`next: ${error.suggestedFix}`);
        return 1;
      }
      throw error;
    }
  }
  console.error(
    sub === undefined ? usage : `writ config: unknown command ${JSON.stringify(sub)}\n\n${usage}`,
  );
  return 2;
}
