import { describe, expect, it } from "vitest";
import { parseProposal } from "../../src/intake/index.ts";
import { anthropicMessage, chatCompletion, mcpToolsCall, responsesResponse } from "./fixtures.ts";
import { errorOf } from "./helpers.ts";

describe("auto", () => {
  it("detects each format by its shape", () => {
    const chat = chatCompletion();
    const message = chat.choices[0]?.message;
    const cases: [unknown, string][] = [
      [chat, "openai-chat"],
      [message, "openai-chat"],
      [message?.tool_calls[0], "openai-chat"],
      [
        { role: "assistant", content: [{ type: "text", text: "On it." }], tool_calls: message?.tool_calls },
        "openai-chat",
      ],
      [responsesResponse(), "openai-responses"],
      [{ type: "function_call", call_id: "c", name: "n", arguments: "{}" }, "openai-responses"],
      [anthropicMessage(), "anthropic"],
      [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "n", input: {} }] }, "anthropic"],
      [{ type: "tool_use", id: "t", name: "n", input: {} }, "anthropic"],
      [mcpToolsCall(), "mcp"],
      [{ calls: [{ tool: "repo.read", arguments: {} }] }, "canonical"],
      [{ tool: "repo.read", arguments: {} }, "canonical"],
    ];
    for (const [payload, format] of cases) expect(parseProposal("auto", payload).format).toBe(format);
  });

  it("lists the accepted formats when the shape is unknown or ambiguous", () => {
    const unknown = errorOf(() => parseProposal("auto", { prompt: "hello" }));
    expect(unknown.category).toBe("invalid_argument");
    expect(unknown.message).toBe(
      "cannot tell the proposal format: the payload has the shape of no accepted format",
    );
    for (const format of ["openai-chat", "openai-responses", "anthropic", "mcp", "canonical"]) {
      expect(unknown.suggested_fix).toContain(`${format} (`);
    }
    const ambiguous = errorOf(() => parseProposal("auto", { tool: "x", arguments: {}, output: [] }));
    expect(ambiguous.message).toBe(
      "cannot tell the proposal format: the payload has the shape of several formats (openai-responses, canonical)",
    );
  });

  it("refuses payloads that are not JSON objects, and unknown format names", () => {
    expect(errorOf(() => parseProposal("auto", "[]")).message).toBe(
      "the proposal payload must be a JSON object",
    );
    expect(errorOf(() => parseProposal("auto", [mcpToolsCall()])).field_errors).toEqual([
      { path: "", message: "expected an object, got an array" },
    ]);
    // @ts-expect-error: callers without types can pass any string
    expect(errorOf(() => parseProposal("gemini", mcpToolsCall())).message).toBe(
      'unknown proposal format "gemini"',
    );
  });
});
