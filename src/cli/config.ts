/**
 * `writ config schema` prints the JSON Schema of the configuration file, for editor completion
 * (e.g. `# yaml-language-server: $schema=writ.schema.json` at the top of a YAML file).
 * `writ config check [--config file]` validates a configuration and says what is wrong.
 */
import { z } from "zod";
import { ConfigError, gatewayConfigSchema, loadConfig } from "../config/index.ts";
import { ContractRegistry } from "../contracts/index.ts";
import { WritError } from "../core/errors.ts";

const usage = `usage: writ config schema            print the JSON Schema of the configuration file
       writ config check [--config f]  validate a configuration file (default: the embedded one)`;

export async function configCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "schema") {
    const schema = z.toJSONSchema(gatewayConfigSchema, { io: "input", unrepresentable: "any" });
    console.log(JSON.stringify({ title: "Writ gateway configuration", ...schema }, null, 2));
    return 0;
  }
  if (sub === "check") {
    const file = rest[0] === "--config" ? rest[1] : undefined;
    if (rest.length > 0 && file === undefined) {
      console.error(usage);
      return 2;
    }
    try {
      const config = await loadConfig(file);
      // What `writ serve` would refuse too: the contracts' JSON Schemas must compile.
      new ContractRegistry(config.tools, { pointer: "/tools" });
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
  console.error(usage);
  return 2;
}
