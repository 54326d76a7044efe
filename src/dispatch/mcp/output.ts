/**
 * An upstream MCP server's `tools/call` answer as a backend output (the input of result
 * handling: output schema, redaction, layering). The content items and `structuredContent` are
 * kept as the server sent them. An `isError` answer is the tool's own failure: its content is
 * kept too (the model needs the tool's message), marked `is_error`; when the server answered
 * with Writ's error protocol (as `writ/executor`'s MCP guard does when it refuses a grant), that
 * error is raised as it is. A `resources/read` or `prompts/get` answer becomes content items the
 * same way; src/mcp/results.ts turns the shaped results back into MCP answers.
 */
import type { CallToolResult, GetPromptResult, ReadResourceResult } from "@modelcontextprotocol/client";
import { z } from "zod";
import type { ToolContract } from "../../contracts/schema.ts";
import { WritError, writErrorSchema } from "../../core/errors.ts";
import type { ToolOutput } from "../../core/handlers.ts";

const writErrorContentSchema = z.object({ error: writErrorSchema });
/** Writ's structured content is an object (2025's only kind; 2026-07-28 allows any JSON value). */
const structuredObjectSchema = z.record(z.string(), z.unknown());

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
          ...(e.retry_after === undefined ? {} : { retryAfter: e.retry_after }),
        },
      );
    }
    const structured = structuredObjectSchema.safeParse(result.structuredContent);
    return {
      summary: `${contract.name} failed on the MCP server ${server}`,
      structured_content: structured.success ? structured.data : {},
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
  const structured = structuredObjectSchema.safeParse(result.structuredContent ?? {});
  if (!structured.success) {
    throw new WritError(
      "backend_error",
      `${contract.name}: the MCP server ${server} sent a structuredContent that is not an object; the output was withheld`,
      {
        suggestedFix:
          "make the server's tool return an object as structuredContent (Writ's contracts describe objects)",
        retryable: false,
        effectCommitted: contract.side_effect === "none" ? false : "unknown",
      },
    );
  }
  return {
    summary: `${contract.name} ran on the MCP server ${server}`,
    structured_content: structured.data,
    content: result.content,
    target,
  };
}

/**
 * A `resources/read` answer as a backend output: each of its contents as an embedded resource
 * item, so that result handling redacts it like any content (text scrubbed, blobs untouched).
 */
export function resourceOutput(
  contract: ToolContract,
  server: string,
  result: ReadResourceResult,
): ToolOutput {
  return {
    summary: `${contract.name} read ${result.contents.length} item(s) on the MCP server ${server}`,
    structured_content: {},
    content: result.contents.map((resource) => ({ type: "resource", resource })),
    target: `mcp:${server}`,
  };
}

/**
 * A `prompts/get` answer as a backend output: each message's content as a content item (redacted
 * as any), its role at the same index in `structured_content.roles`, the description kept.
 */
export function promptOutput(contract: ToolContract, server: string, result: GetPromptResult): ToolOutput {
  return {
    summary: `${contract.name} got ${result.messages.length} message(s) from the MCP server ${server}`,
    structured_content: {
      ...(result.description === undefined ? {} : { description: result.description }),
      roles: result.messages.map((message) => message.role),
    },
    content: result.messages.map((message) => message.content),
    target: `mcp:${server}`,
  };
}
