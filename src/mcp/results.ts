/**
 * Shaped results (redacted, layered: src/results/) back as the MCP answers of `resources/read` and
 * `prompts/get`: the reverse of src/dispatch/mcp/output.ts's `resourceOutput` and `promptOutput`.
 */
import type { GetPromptResult, PromptMessage, ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { LayeredResult } from "../results/index.ts";

/** The contents of a shaped `resources/read` result, as the server sent them (redacted). */
export function resourceContents(result: LayeredResult): ReadResourceResult["contents"] {
  return (result.content ?? []).flatMap((item) => (item.type === "resource" ? [item.resource] : []));
}

/** What `promptOutput` keeps of a prompt beside its messages' contents. */
const promptShapeSchema = z.object({
  description: z.string().optional(),
  roles: z.array(z.enum(["user", "assistant"])),
});

/** The description and messages of a shaped `prompts/get` result (none when it was withheld). */
export function promptMessages(result: LayeredResult): Pick<GetPromptResult, "description" | "messages"> {
  const shape = promptShapeSchema.safeParse(result.structured_content);
  if (!shape.success) return { messages: [] };
  const { description, roles } = shape.data;
  const messages: PromptMessage[] = (result.content ?? []).flatMap((content, index) => {
    const role = roles[index];
    return role === undefined ? [] : [{ role, content }];
  });
  return { ...(description === undefined ? {} : { description }), messages };
}
