/**
 * An upstream MCP server's `tools/call` answer as a backend output (the input of result
 * handling: output schema, redaction, layering). The content items and `structuredContent` are
 * kept as the server sent them. An `isError` answer is the tool's own failure: its content is
 * kept too (the model needs the tool's message), marked `is_error`; when the server answered
 * with Writ's error protocol (as `writ/executor`'s MCP guard does when it refuses a grant), that
 * error is raised as it is.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolContract } from "../contracts/schema.ts";
import { WritError, writErrorSchema } from "../core/errors.ts";
import type { ToolOutput } from "../core/handlers.ts";

const writErrorContentSchema = z.object({ error: writErrorSchema });

export function upstreamOutput(contract: ToolContract, server: string, result: CallToolResult): ToolOutput {
  const target = `mcp:${server}`;
  if (result.isError === true) {
    const protocol = writErrorContentSchema.safeParse(result.structuredContent);
    if (protocol.success) {
      const e = protocol.data.error;
      throw new WritError(
        e.category,
        `${contract.name}: the MCP server ${server} refused the call: ${e.message}`,
        {
          suggestedFix: e.suggested_fix,
          retryable: e.retryable,
          effectCommitted: e.effect_committed,
          fieldErrors: e.field_errors,
        },
      );
    }
    return {
      summary: `${contract.name} failed on the MCP server ${server}`,
      structured_content: result.structuredContent ?? {},
      content: result.content,
      target,
      is_error: true,
    };
  }
  if (result.structuredContent === undefined && contract.output_schema !== undefined) {
    throw new WritError(
      "backend_error",
      `${contract.name}: the MCP server ${server} sent no structuredContent, and the contract declares an output_schema; the output was withheld`,
      {
        suggestedFix:
          "make the server's tool return structuredContent, or remove output_schema from the contract",
        retryable: false,
        effectCommitted: contract.side_effect === "none" ? false : "unknown",
      },
    );
  }
  return {
    summary: `${contract.name} ran on the MCP server ${server}`,
    structured_content: result.structuredContent ?? {},
    content: result.content,
    target,
  };
}
