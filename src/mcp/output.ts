/**
 * An upstream MCP server's `tools/call` answer as a backend output (the input of result
 * handling: output schema, redaction, layering). An `isError` answer is the tool's own failure:
 * it becomes a WritError, keeping the category when the server answered with Writ's error
 * protocol (as `writ/executor`'s MCP guard does when it refuses a grant).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolContract } from "../contracts/schema.ts";
import { WritError, writErrorSchema } from "../core/errors.ts";
import type { ToolOutput } from "../core/handlers.ts";
import { scrubString } from "../decisionlog/detectors.ts";

/** Longest upstream message quoted in an error. */
const QUOTED_LIMIT = 300;

const writErrorContentSchema = z.object({ error: writErrorSchema });

function textOf(result: CallToolResult): string {
  return result.content
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n")
    .trim();
}

export function upstreamOutput(contract: ToolContract, server: string, result: CallToolResult): ToolOutput {
  if (result.isError === true) {
    const said = scrubString(textOf(result)).slice(0, QUOTED_LIMIT);
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
    throw new WritError(
      "invalid_argument",
      `${contract.name}: the MCP server ${server} reported an error${said === "" ? "" : `: ${said}`}`,
      {
        suggestedFix: "read the tool's message, then change the arguments or the resource's state",
        retryable: false,
        effectCommitted: contract.side_effect === "none" ? false : "unknown",
      },
    );
  }
  const structured =
    result.structuredContent !== undefined ? result.structuredContent : { content: result.content };
  return {
    summary: `${contract.name} ran on the MCP server ${server}`,
    structured_content: structured,
    target: `mcp:${server}`,
  };
}
