/**
 * `auto`: which format a payload is, from its shape alone. Exactly one format must match;
 * otherwise the caller is asked to name it.
 */
import type { ConcreteFormat } from "./lib/adapter.ts";

function hasToolUseBlock(content: unknown): boolean {
  return (
    Array.isArray(content) &&
    content.some(
      (block) => block !== null && typeof block === "object" && Reflect.get(block, "type") === "tool_use",
    )
  );
}

/** The formats whose shape `payload` (a JSON object) has, in a fixed order. */
export function matchingFormats(payload: Record<string, unknown>): ConcreteFormat[] {
  const { type, role, content } = payload;
  const matches: ConcreteFormat[] = [];
  if ("jsonrpc" in payload) matches.push("mcp");
  if (
    "choices" in payload ||
    "tool_calls" in payload ||
    (type === "function" && "function" in payload) ||
    (role === "assistant" && !Array.isArray(content))
  ) {
    matches.push("openai-chat");
  }
  if ("output" in payload || type === "function_call") matches.push("openai-responses");
  if (
    type === "message" ||
    type === "tool_use" ||
    // An OpenAI assistant message may also carry content parts; its tool_calls say which it is.
    (Array.isArray(content) &&
      !("tool_calls" in payload) &&
      (role === "assistant" || hasToolUseBlock(content)))
  ) {
    matches.push("anthropic");
  }
  if ("calls" in payload || "tool" in payload) matches.push("canonical");
  return matches;
}
