import { describe, expect, it } from "vitest";
import { parseProposal } from "../../src/intake/index.ts";
import { responsesResponse } from "./fixtures.ts";
import { errorOf } from "./helpers.ts";

describe("openai-responses", () => {
  it("reads function_call items and skips reasoning and messages", () => {
    const response = responsesResponse();
    const payload = {
      ...response,
      output: [
        ...response.output,
        { type: "message", id: "msg_1", status: "completed", role: "assistant", content: [] },
        {
          type: "function_call",
          id: "fc_2",
          call_id: "call_2",
          name: "get_current_weather",
          arguments: '{"location":"Oslo"}',
          status: "completed",
        },
      ],
    };
    expect(parseProposal("openai-responses", payload)).toEqual({
      format: "openai-responses",
      calls: [
        {
          callId: "call_unLAR8MvFNptuiZK6K6HCy5k",
          tool: "get_current_weather",
          arguments: { location: "Boston, MA", unit: "celsius" },
          source: "openai",
          pointer: "/output/1",
        },
        {
          callId: "call_2",
          tool: "get_current_weather",
          arguments: { location: "Oslo" },
          source: "openai",
          pointer: "/output/3",
        },
      ],
    });
  });

  it("reads one function_call item on its own", () => {
    const item = { type: "function_call", call_id: "call_9", name: "lookup", arguments: "{}" };
    expect(parseProposal("openai-responses", item).calls).toEqual([
      { callId: "call_9", tool: "lookup", arguments: {}, source: "openai", pointer: "" },
    ]);
  });

  it("names the pointer of bad arguments, a missing call_id and an unknown item field", () => {
    const payload = {
      output: [
        { type: "function_call", call_id: "call_1", name: "lookup", arguments: "{not json" },
        { type: "function_call", name: "lookup", arguments: "{}" },
        { type: "function_call", call_id: "call_3", name: "lookup", arguments: "{}", namespace: "x" },
      ],
    };
    const error = errorOf(() => parseProposal("openai-responses", payload));
    expect(error.field_errors.map((problem) => problem.path)).toEqual([
      "/output/0/arguments",
      "/output/1/call_id",
      "/output/2/namespace",
    ]);
  });

  it("refuses calls that are not completed and client-run items that are not function calls", () => {
    const partial = {
      type: "function_call",
      call_id: "c",
      name: "lookup",
      arguments: "{}",
      status: "incomplete",
    };
    expect(errorOf(() => parseProposal("openai-responses", partial)).field_errors[0]?.path).toBe("/status");

    const shell = {
      output: [
        { type: "local_shell_call", id: "ls_1", call_id: "c", action: { type: "exec", command: ["ls"] } },
      ],
    };
    const error = errorOf(() => parseProposal("openai-responses", shell));
    expect(error.field_errors[0]).toEqual({
      path: "/output/0/type",
      message: expect.stringContaining('"local_shell_call" are not function calls'),
    });
  });

  it("says a response with only a message proposes no tool call", () => {
    const payload = {
      output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Hi" }] }],
    };
    expect(errorOf(() => parseProposal("openai-responses", payload)).message).toBe(
      "the payload proposes no tool call",
    );
  });
});
