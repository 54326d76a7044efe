/**
 * OpenAI Responses: a `response` object whose `output` items of type `function_call`
 * (`{type, id?, call_id, name, arguments, status?}`) are the calls; `arguments` is a JSON object
 * encoded as a string. Items the model produced for the user or that OpenAI ran itself (messages,
 * reasoning, hosted tools) are skipped; items a client would execute but that are not function calls
 * (custom, shell, computer, patch) are refused, so that nothing runnable passes unauthorized.
 */
import { z } from "zod";
import type { ProposedCall } from "../core/types.ts";
import { isJsonObject, type ProposalAdapter } from "./lib/adapter.ts";
import { readArgumentsText } from "./lib/arguments.ts";
import { type Problems, pointerTo } from "./lib/problems.ts";

const functionCallSchema = z.strictObject({
  type: z.literal("function_call"),
  id: z.string().optional(),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
  status: z.enum(["in_progress", "completed", "incomplete"]).optional(),
});

/** Output items that are not calls for the client to run: text, reasoning, tools OpenAI hosts. */
const skippedItemTypes = new Set([
  "message",
  "reasoning",
  "web_search_call",
  "file_search_call",
  "code_interpreter_call",
  "image_generation_call",
  "mcp_call",
  "mcp_list_tools",
]);

const itemTypeSchema = z.looseObject({ type: z.string() });

/** The `response` object; every documented top-level field is allowed, only `output` is read. */
const responseSchema = z.strictObject({
  id: z.string().optional(),
  object: z.literal("response").optional(),
  created_at: z.number().optional(),
  status: z.string().optional(),
  error: z.unknown().optional(),
  incomplete_details: z.unknown().optional(),
  instructions: z.unknown().optional(),
  max_output_tokens: z.number().nullable().optional(),
  max_tool_calls: z.number().nullable().optional(),
  model: z.string().optional(),
  output: z.array(z.unknown()),
  output_text: z.string().optional(),
  parallel_tool_calls: z.boolean().optional(),
  previous_response_id: z.string().nullable().optional(),
  prompt: z.unknown().optional(),
  prompt_cache_key: z.string().nullable().optional(),
  prompt_cache_retention: z.string().nullable().optional(),
  reasoning: z.unknown().optional(),
  safety_identifier: z.string().nullable().optional(),
  service_tier: z.string().nullable().optional(),
  store: z.boolean().optional(),
  temperature: z.number().nullable().optional(),
  text: z.unknown().optional(),
  tool_choice: z.unknown().optional(),
  tools: z.array(z.unknown()).optional(),
  top_logprobs: z.number().nullable().optional(),
  top_p: z.number().nullable().optional(),
  truncation: z.string().nullable().optional(),
  usage: z.unknown().optional(),
  user: z.string().nullable().optional(),
  metadata: z.unknown().optional(),
  background: z.boolean().nullable().optional(),
  conversation: z.unknown().optional(),
  billing: z.unknown().optional(),
});

function readFunctionCall(item: unknown, at: string, problems: Problems): ProposedCall | undefined {
  const call = problems.parse(functionCallSchema, item, at);
  if (call === undefined) return undefined;
  if (call.status !== undefined && call.status !== "completed") {
    problems.add(
      pointerTo(at, "status"),
      `the function call is ${call.status}, so its arguments may be partial; send it once its status is completed`,
    );
    return undefined;
  }
  const args = readArgumentsText(call.arguments, pointerTo(at, "arguments"), problems);
  if (args === undefined) return undefined;
  return { callId: call.call_id, tool: call.name, arguments: args, source: "openai", pointer: at };
}

function readItem(item: unknown, at: string, problems: Problems): ProposedCall | undefined {
  const typed = problems.parse(itemTypeSchema, item, at);
  if (typed === undefined || skippedItemTypes.has(typed.type)) return undefined;
  if (typed.type === "function_call") return readFunctionCall(item, at, problems);
  problems.add(
    pointerTo(at, "type"),
    `output items of type "${typed.type}" are not function calls, so Writ cannot authorize them (it skips only messages, reasoning and tools OpenAI runs itself); offer the tool as a function tool`,
  );
  return undefined;
}

export const openaiResponsesAdapter: ProposalAdapter = {
  format: "openai-responses",
  shapes:
    'a Responses API response {output: [...]} with function_call items, or one function_call item {type: "function_call", call_id, name, arguments}',
  fix: "Send the Responses API response as returned (or one of its function_call output items); arguments must be a JSON object encoded as a string.",
  read(payload, problems) {
    if (!isJsonObject(payload)) return [];
    if (!("output" in payload)) {
      const call = readItem(payload, "", problems);
      return call === undefined ? [] : [call];
    }
    const response = problems.parse(responseSchema, payload, "");
    if (response === undefined) return [];
    const calls: ProposedCall[] = [];
    for (const [index, item] of response.output.entries()) {
      const call = readItem(item, pointerTo("", "output", index), problems);
      if (call !== undefined) calls.push(call);
    }
    return calls;
  },
};
