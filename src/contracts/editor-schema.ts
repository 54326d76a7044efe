/** A JSON Schema of the config's `tools:` section, for completion and checks in editors. */
import { z } from "zod";
import { toolContractsSchema } from "./schema.ts";

/**
 * The JSON Schema (draft 2020-12) of the `tools:` list as it is written (defaults optional), e.g.
 * for a `# yaml-language-server: $schema=…` line or an editor's schema mapping.
 */
export function contractsJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(toolContractsSchema, { io: "input", target: "draft-2020-12" });
}
