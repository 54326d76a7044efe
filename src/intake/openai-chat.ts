/**
 * OpenAI Chat Completions: a whole `chat.completion` response, one assistant message, or one
 * `tool_calls` item. Each item is `{id, type: "function", function: {name, arguments}}`, where
 * `arguments` is a JSON object encoded as a string.
 */
import { z } from "zod";
import type { ProposedCall } from "../core/types.ts";
import { isJsonObject, type ProposalAdapter } from "./lib/adapter.ts";
import { readArgumentsText } from "./lib/arguments.ts";
import { type Problems, pointerTo } from "./lib/problems.ts";

const functionToolCallSchema = z.strictObject({
  id: z.string().min(1),
  type: z.literal("function"),
  function: z.strictObject({
    name: z.string().min(1),
    arguments: z.string(),
  }),
});

const toolCallTypeSchema = z.looseObject({ type: z.string() });

/** An assistant message as the API returns it (`ChatCompletionMessage`) or as a client replays it. */
const assistantMessageSchema = z.strictObject({
  role: z.literal("assistant"),
  content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional(),
  refusal: z.string().nullable().optional(),
  tool_calls: z.array(z.unknown()).optional(),
  function_call: z.unknown().optional(),
  annotations: z.array(z.unknown()).optional(),
  audio: z.unknown().optional(),
  name: z.string().optional(),
});

const choiceSchema = z.strictObject({
  index: z.number().int().nonnegative().optional(),
  message: z.unknown(),
  finish_reason: z.string().nullable().optional(),
  logprobs: z.unknown().optional(),
});

const chatCompletionSchema = z.strictObject({
  id: z.string().optional(),
  object: z.literal("chat.completion").optional(),
  created: z.number().optional(),
  model: z.string().optional(),
  choices: z.array(z.unknown()),
  usage: z.unknown().optional(),
  system_fingerprint: z.string().nullable().optional(),
  service_tier: z.string().nullable().optional(),
});

function readToolCall(item: unknown, at: string, problems: Problems): ProposedCall | undefined {
  const typed = toolCallTypeSchema.safeParse(item);
  if (typed.success && typed.data.type === "custom") {
    problems.add(
      pointerTo(at, "type"),
      "custom tool calls carry free text, not JSON arguments, and cannot be authorized; declare the tool as a function tool",
    );
    return undefined;
  }
  const call = problems.parse(functionToolCallSchema, item, at);
  if (call === undefined) return undefined;
  const args = readArgumentsText(call.function.arguments, pointerTo(at, "function", "arguments"), problems);
  if (args === undefined) return undefined;
  return { callId: call.id, tool: call.function.name, arguments: args, source: "openai", pointer: at };
}

function readMessage(message: unknown, at: string, problems: Problems): ProposedCall[] {
  const parsed = problems.parse(assistantMessageSchema, message, at);
  if (parsed === undefined) return [];
  if (parsed.function_call !== undefined && parsed.function_call !== null) {
    problems.add(
      pointerTo(at, "function_call"),
      "the deprecated function_call is not accepted; pass tools (not functions) so the model answers with tool_calls",
    );
  }
  const calls: ProposedCall[] = [];
  for (const [index, item] of (parsed.tool_calls ?? []).entries()) {
    const call = readToolCall(item, pointerTo(at, "tool_calls", index), problems);
    if (call !== undefined) calls.push(call);
  }
  return calls;
}

function readCompletion(payload: unknown, problems: Problems): ProposedCall[] {
  const completion = problems.parse(chatCompletionSchema, payload, "");
  if (completion === undefined) return [];
  if (completion.choices.length > 1) {
    problems.add(
      "/choices",
      `the response holds ${completion.choices.length} alternative choices; send the one choice whose tool calls will run (its message)`,
    );
    return [];
  }
  const [first] = completion.choices;
  if (first === undefined) return [];
  const choice = problems.parse(choiceSchema, first, "/choices/0");
  if (choice === undefined) return [];
  if (choice.finish_reason === "length") {
    problems.add(
      "/choices/0/finish_reason",
      "the completion was cut off at the token limit, so its tool calls may be incomplete; retry with a larger max_completion_tokens",
    );
    return [];
  }
  return readMessage(choice.message, "/choices/0/message", problems);
}

export const openaiChatAdapter: ProposalAdapter = {
  format: "openai-chat",
  shapes:
    'a chat.completion response, one assistant message {role, content, tool_calls}, or one tool_calls item {id, type: "function", function: {name, arguments}}',
  fix: "Send the Chat Completions response as the API returned it (or its assistant message, or one tool_calls item); function.arguments must be a JSON object encoded as a string.",
  read(payload, problems) {
    if (!isJsonObject(payload)) return [];
    if ("choices" in payload) return readCompletion(payload, problems);
    if ("role" in payload || "tool_calls" in payload) return readMessage(payload, "", problems);
    const call = readToolCall(payload, "", problems);
    return call === undefined ? [] : [call];
  },
};
