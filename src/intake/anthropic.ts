/**
 * Anthropic Messages: an assistant message whose `content` blocks of type `tool_use`
 * (`{type, id, name, input}`) are the calls, or one `tool_use` block. Text and thinking blocks and
 * the blocks of tools Anthropic runs itself (server tools, MCP connector) are skipped; any other
 * block type is refused, so that nothing runnable passes unauthorized.
 */
import { z } from "zod";
import type { ProposedCall } from "../core/types.ts";
import { isJsonObject, type ProposalAdapter } from "./lib/adapter.ts";
import { readArgumentsObject } from "./lib/arguments.ts";
import { type Problems, pointerTo } from "./lib/problems.ts";

const toolUseSchema = z.strictObject({
  type: z.literal("tool_use"),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.unknown(),
  /** Who invoked the tool: the model directly, or code it runs in the code execution tool. */
  caller: z.strictObject({ type: z.string(), tool_id: z.string().optional() }).optional(),
});

const skippedBlockTypes = new Set([
  "text",
  "thinking",
  "redacted_thinking",
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "tool_search_tool_result",
  "mcp_tool_use",
  "mcp_tool_result",
  "container_upload",
]);

const blockTypeSchema = z.looseObject({ type: z.string() });

const messageSchema = z.strictObject({
  id: z.string().optional(),
  type: z.literal("message").optional(),
  role: z.literal("assistant").optional(),
  model: z.string().optional(),
  content: z.array(z.unknown()),
  stop_reason: z.string().nullable().optional(),
  stop_sequence: z.string().nullable().optional(),
  stop_details: z.unknown().optional(),
  usage: z.unknown().optional(),
  container: z.unknown().optional(),
  context_management: z.unknown().optional(),
});

function readBlock(block: unknown, at: string, problems: Problems): ProposedCall | undefined {
  const typed = problems.parse(blockTypeSchema, block, at);
  if (typed === undefined || skippedBlockTypes.has(typed.type)) return undefined;
  if (typed.type !== "tool_use") {
    problems.add(
      pointerTo(at, "type"),
      `content blocks of type "${typed.type}" are not tool_use blocks, so Writ cannot authorize them (it skips only text, thinking and tools Anthropic runs itself)`,
    );
    return undefined;
  }
  const toolUse = problems.parse(toolUseSchema, block, at);
  if (toolUse === undefined) return undefined;
  const args = readArgumentsObject(toolUse.input, pointerTo(at, "input"), problems);
  if (args === undefined) return undefined;
  return { callId: toolUse.id, tool: toolUse.name, arguments: args, source: "anthropic", pointer: at };
}

export const anthropicAdapter: ProposalAdapter = {
  format: "anthropic",
  shapes:
    'a Messages API message {type: "message", role: "assistant", content: [...]} with tool_use blocks, or one tool_use block {type: "tool_use", id, name, input}',
  fix: "Send the Messages API response as returned (or one of its tool_use content blocks); each tool_use input must be a JSON object.",
  read(payload, problems) {
    if (!isJsonObject(payload)) return [];
    if (!("content" in payload)) {
      const call = readBlock(payload, "", problems);
      return call === undefined ? [] : [call];
    }
    const message = problems.parse(messageSchema, payload, "");
    if (message === undefined) return [];
    if (message.stop_reason === "max_tokens") {
      problems.add(
        "/stop_reason",
        "the message was cut off at max_tokens, so its tool_use input may be incomplete; retry with a larger max_tokens",
      );
      return [];
    }
    const calls: ProposedCall[] = [];
    for (const [index, block] of message.content.entries()) {
      const call = readBlock(block, pointerTo("", "content", index), problems);
      if (call !== undefined) calls.push(call);
    }
    return calls;
  },
};
