import { describe, expect, it } from "vitest";
import { parseProposal } from "../../src/intake/index.ts";
import { chatCompletion } from "./fixtures.ts";
import { errorOf } from "./helpers.ts";

describe("openai-chat", () => {
  it("reads every tool call of a chat.completion response, in order", () => {
    expect(parseProposal("openai-chat", chatCompletion())).toEqual({
      format: "openai-chat",
      calls: [
        {
          callId: "call_abc123",
          tool: "get_current_weather",
          arguments: { location: "Boston, MA" },
          source: "openai",
          pointer: "/choices/0/message/tool_calls/0",
        },
        {
          callId: "call_def456",
          tool: "get_current_weather",
          arguments: { location: "Paris, France", unit: "celsius" },
          source: "openai",
          pointer: "/choices/0/message/tool_calls/1",
        },
      ],
    });
  });

  it("reads a single assistant message and a single tool_calls item", () => {
    const message = chatCompletion().choices[0]?.message;
    expect(parseProposal("openai-chat", message).calls.map((call) => call.pointer)).toEqual([
      "/tool_calls/0",
      "/tool_calls/1",
    ]);
    const item = message?.tool_calls[1];
    expect(parseProposal("openai-chat", item).calls).toEqual([
      {
        callId: "call_def456",
        tool: "get_current_weather",
        arguments: { location: "Paris, France", unit: "celsius" },
        source: "openai",
        pointer: "",
      },
    ]);
  });

  it("names the pointer of arguments that are not JSON, without fishing in the text", () => {
    const payload = chatCompletion();
    const call = payload.choices[0]?.message.tool_calls[1];
    if (call === undefined) throw new Error("fixture changed");
    call.function.arguments = 'Sure! ```json\n{"location": "Paris"}\n```';
    const error = errorOf(() => parseProposal("openai-chat", payload));
    expect(error.category).toBe("invalid_argument");
    expect(error.field_errors).toHaveLength(1);
    expect(error.field_errors[0]?.path).toBe("/choices/0/message/tool_calls/1/function/arguments");
    expect(error.field_errors[0]?.message).toMatch(
      /^arguments are not valid JSON \(.+\); expected a JSON object/,
    );
    expect(error.suggested_fix).toMatch(/JSON object encoded as a string/);
  });

  it("refuses arguments that are JSON but not an object", () => {
    const payload = chatCompletion();
    const call = payload.choices[0]?.message.tool_calls[0];
    if (call === undefined) throw new Error("fixture changed");
    call.function.arguments = '["Boston, MA"]';
    expect(errorOf(() => parseProposal("openai-chat", payload)).field_errors).toEqual([
      {
        path: "/choices/0/message/tool_calls/0/function/arguments",
        message: "arguments must be a JSON object, got an array",
      },
    ]);
  });

  it("refuses a missing name and an unknown field in a call item, each at its own pointer", () => {
    const payload = {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_1", type: "function", function: { arguments: "{}" } },
        { id: "call_2", type: "function", function: { name: "lookup", arguments: "{}" }, index: 0 },
        { id: "call_3", type: "function", function: { name: "lookup", arguments: "{}", strict: true } },
      ],
    };
    const error = errorOf(() => parseProposal("openai-chat", payload));
    expect(error.field_errors).toEqual([
      { path: "/tool_calls/0/function/name", message: "required field is missing (expected string)" },
      { path: "/tool_calls/1/index", message: 'unknown field "index"' },
      { path: "/tool_calls/2/function/strict", message: 'unknown field "strict"' },
    ]);
    expect(error.message).toBe(
      "the openai-chat payload is malformed: /tool_calls/0/function/name: required field is missing (expected string) (and 2 more)",
    );
  });

  it("refuses a repeated key inside the arguments text", () => {
    const item = {
      id: "call_1",
      type: "function",
      function: { name: "fs_read", arguments: '{"path": "/tmp/safe", "path": "/etc/shadow"}' },
    };
    expect(errorOf(() => parseProposal("openai-chat", item)).field_errors).toEqual([
      {
        path: "/function/arguments",
        message:
          'arguments: at /path, the key "path" appears twice in one object; each key may appear once per object',
      },
    ]);
  });

  it("refuses custom tool calls, legacy function_call, several choices and cut-off completions", () => {
    const custom = { id: "call_1", type: "custom", custom: { name: "code_exec", input: "print(1)" } };
    expect(errorOf(() => parseProposal("openai-chat", custom)).field_errors[0]?.path).toBe("/type");

    const legacy = { role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } };
    expect(errorOf(() => parseProposal("openai-chat", legacy)).field_errors[0]?.path).toBe("/function_call");

    const twoChoices = chatCompletion();
    const [choice] = twoChoices.choices;
    if (choice === undefined) throw new Error("fixture changed");
    twoChoices.choices.push({ ...choice, index: 1 });
    expect(errorOf(() => parseProposal("openai-chat", twoChoices)).field_errors[0]?.path).toBe("/choices");

    const cut = chatCompletion();
    if (cut.choices[0] === undefined) throw new Error("fixture changed");
    cut.choices[0].finish_reason = "length";
    expect(errorOf(() => parseProposal("openai-chat", cut)).field_errors[0]?.path).toBe(
      "/choices/0/finish_reason",
    );
  });

  it("refuses streaming chunks and unknown envelope fields", () => {
    const chunk = { ...chatCompletion(), object: "chat.completion.chunk" };
    expect(errorOf(() => parseProposal("openai-chat", chunk)).field_errors).toEqual([
      { path: "/object", message: 'must be "chat.completion", got "chat.completion.chunk"' },
    ]);
    const extra = { ...chatCompletion(), provider: "somewhere" };
    expect(errorOf(() => parseProposal("openai-chat", extra)).field_errors).toEqual([
      { path: "/provider", message: 'unknown field "provider"' },
    ]);
  });

  it("says a text-only answer proposes no tool call", () => {
    const payload = {
      ...chatCompletion(),
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "It is sunny.", refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
    };
    const error = errorOf(() => parseProposal("openai-chat", payload));
    expect(error.message).toBe("the payload proposes no tool call");
    expect(error.category).toBe("invalid_argument");
  });
});
