import { describe, expect, it } from "vitest";
import { parseProposal } from "../../src/intake/index.ts";
import { anthropicMessage } from "./fixtures.ts";
import { errorOf } from "./helpers.ts";

describe("anthropic", () => {
  it("reads tool_use blocks and skips text and thinking", () => {
    const message = anthropicMessage();
    const payload = {
      ...message,
      content: [
        { type: "thinking", thinking: "Weather tool.", signature: "EqQB…" },
        ...message.content,
        {
          type: "tool_use",
          id: "toolu_02",
          name: "get_time",
          input: { timezone: "America/Los_Angeles" },
          caller: { type: "direct" },
        },
      ],
    };
    expect(parseProposal("anthropic", payload)).toEqual({
      format: "anthropic",
      calls: [
        {
          callId: "toolu_01A09q90qw90lq917835lq9",
          tool: "get_weather",
          arguments: { location: "San Francisco, CA", unit: "celsius" },
          source: "anthropic",
          pointer: "/content/2",
        },
        {
          callId: "toolu_02",
          tool: "get_time",
          arguments: { timezone: "America/Los_Angeles" },
          source: "anthropic",
          pointer: "/content/3",
        },
      ],
    });
  });

  it("reads one tool_use block on its own", () => {
    const block = { type: "tool_use", id: "toolu_1", name: "lookup", input: {} };
    expect(parseProposal("anthropic", block).calls[0]?.pointer).toBe("");
  });

  it("names the pointer of an input that is not an object, a missing name and an unknown field", () => {
    const payload = {
      role: "assistant",
      content: [
        { type: "tool_use", id: "toolu_1", name: "lookup", input: "San Francisco" },
        { type: "tool_use", id: "toolu_2", input: {} },
        { type: "tool_use", id: "toolu_3", name: "lookup", input: {}, cache_control: { type: "ephemeral" } },
      ],
    };
    expect(errorOf(() => parseProposal("anthropic", payload)).field_errors).toEqual([
      { path: "/content/0/input", message: "arguments must be a JSON object, got a string" },
      { path: "/content/1/name", message: "required field is missing (expected string)" },
      { path: "/content/2/cache_control", message: 'unknown field "cache_control"' },
    ]);
  });

  it("refuses a message cut off at max_tokens and unknown block types", () => {
    const cut = { ...anthropicMessage(), stop_reason: "max_tokens" };
    expect(errorOf(() => parseProposal("anthropic", cut)).field_errors[0]?.path).toBe("/stop_reason");
    const odd = { content: [{ type: "tool_call", id: "x", name: "lookup", input: {} }] };
    expect(errorOf(() => parseProposal("anthropic", odd)).field_errors[0]?.path).toBe("/content/0/type");
  });
});
