/**
 * Proposal intake end to end: the same read of README.md in ws-demo, as alice, proposed in each
 * provider format (named and detected with `auto`), decided over HTTP; several calls in one
 * payload; malformed payloads refused with field errors.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyGrant } from "../../src/executor/index.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import {
  answerOf,
  chatToolCall,
  digestOf,
  errorOf,
  expectLogVerifies,
  logEntries,
  logEntry,
  onlyOutcome,
  README_ARGS,
  WS,
} from "./api.ts";

let gw: TestGateway;
let alice: string;

beforeAll(async () => {
  gw = await startTestGateway();
  alice = await gw.token("alice");
});

afterAll(async () => {
  await gw?.close();
});

const readArgs = JSON.stringify(README_ARGS);

const chatCompletion = {
  id: "chatcmpl-e2e1",
  object: "chat.completion",
  created: 1_760_000_000,
  model: "gpt-4.1-2025-04-14",
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        content: null,
        refusal: null,
        annotations: [],
        tool_calls: [
          { id: "call_chat1", type: "function", function: { name: "repo_read", arguments: readArgs } },
        ],
      },
      logprobs: null,
      finish_reason: "tool_calls",
    },
  ],
  usage: { prompt_tokens: 120, completion_tokens: 22, total_tokens: 142 },
  service_tier: "default",
  system_fingerprint: "fp_e2e",
};

const chatMessage = {
  role: "assistant",
  content: null,
  tool_calls: [{ id: "call_msg1", type: "function", function: { name: "repo_read", arguments: readArgs } }],
};

const chatItem = { id: "call_item1", type: "function", function: { name: "repo_read", arguments: readArgs } };

const responsesOutput = {
  id: "resp_e2e1",
  object: "response",
  created_at: 1_760_000_000,
  status: "completed",
  model: "o4-mini-2025-04-16",
  output: [
    { type: "reasoning", id: "rs_e2e1", summary: [] },
    {
      type: "function_call",
      id: "fc_e2e1",
      call_id: "call_resp1",
      name: "repo_read",
      arguments: readArgs,
      status: "completed",
    },
  ],
  parallel_tool_calls: true,
  tool_choice: "auto",
  tools: [],
  usage: { input_tokens: 100, output_tokens: 40, total_tokens: 140 },
};

const anthropicMessage = {
  id: "msg_e2e1",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5",
  content: [
    { type: "text", text: "I'll read the README first." },
    { type: "tool_use", id: "toolu_e2e1", name: "repo_read", input: README_ARGS },
  ],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: { input_tokens: 90, output_tokens: 30 },
};

const mcpRequest = {
  jsonrpc: "2.0",
  id: 42,
  method: "tools/call",
  params: { name: "repo_read", arguments: README_ARGS },
};

const canonicalPayload = { id: "c-1", tool: "repo.read", arguments: README_ARGS };

const cases = [
  {
    name: "OpenAI Chat: a whole chat.completion",
    format: "openai-chat",
    payload: chatCompletion,
    callId: "call_chat1",
  },
  {
    name: "OpenAI Chat: one assistant message",
    format: "openai-chat",
    payload: chatMessage,
    callId: "call_msg1",
  },
  {
    name: "OpenAI Chat: one tool_calls item",
    format: "openai-chat",
    payload: chatItem,
    callId: "call_item1",
  },
  {
    name: "OpenAI Responses: reasoning + function_call",
    format: "openai-responses",
    payload: responsesOutput,
    callId: "call_resp1",
  },
  {
    name: "Anthropic: text + tool_use",
    format: "anthropic",
    payload: anthropicMessage,
    callId: "toolu_e2e1",
  },
  { name: "MCP tools/call", format: "mcp", payload: mcpRequest, callId: "42" },
  { name: "canonical", format: "canonical", payload: canonicalPayload, callId: "c-1" },
] as const;

describe("each adapter decides the same read of README.md", () => {
  for (const c of cases) {
    for (const format of [c.format, "auto"]) {
      it(`${c.name} (format ${format})`, async () => {
        const outcome = onlyOutcome(await gw.propose(alice, { format, payload: c.payload }));
        expect(outcome).toMatchObject({ call_id: c.callId, decision: "allow", reasons: [] });
        expect(outcome.error).toBeUndefined();
        expect(outcome.result).toBeUndefined();
        const grant = outcome.grant;
        if (grant === undefined) throw new Error("an allowed call must carry a grant");
        expect(grant).toMatchObject({ audience: "writ", max_uses: 1 });

        // The grant is bound to the canonical action, whatever the provider called the tool.
        const claims = await verifyGrant(grant.token, {
          issuer: "writ",
          audience: "writ",
          keys: gw.jwksUrl,
          action: { name: "repo.read", version: "1" },
          resource: { type: "workspace", id: WS },
          args: README_ARGS,
          replay: false,
        });
        expect(claims).toMatchObject({ sub: "alice", jti: grant.jti, dec: outcome.decision_id });
        expect(claims.args).toBe(digestOf(README_ARGS));

        const entry = await logEntry(gw, outcome.decision_id);
        expect(entry).toMatchObject({
          decision: "allow",
          path: "writ/decision",
          subject: "alice",
          action: "repo.read",
          grant_jti: grant.jti,
        });
      });
    }
  }
});

describe("several calls in one payload", () => {
  it("an OpenAI message with two tool calls yields two results, each with its own decision", async () => {
    const payload = {
      role: "assistant",
      content: null,
      tool_calls: [
        chatToolCall("call_a", "repo_read", README_ARGS),
        chatToolCall("call_b", "repo_read", { workspace: WS, path: ".env" }),
      ],
    };
    const [first, second, ...rest] = answerOf(await gw.propose(alice, { format: "auto", payload }));
    expect(rest).toEqual([]);
    expect(first).toMatchObject({ call_id: "call_a", decision: "allow" });
    expect(first?.grant).toBeDefined();
    expect(second).toMatchObject({ call_id: "call_b", decision: "deny" });
    expect(second?.grant).toBeUndefined();
    expect(first?.decision_id).not.toBe(second?.decision_id);
  });

  it("a canonical batch of two reads yields two grants with distinct ids", async () => {
    const payload = {
      calls: [
        { tool: "repo.read", arguments: README_ARGS },
        { tool: "repo.read", arguments: { workspace: WS, path: "src/sum.ts" } },
      ],
    };
    const results = answerOf(await gw.propose(alice, { format: "canonical", payload }));
    expect(results.map((r) => [r.call_id, r.decision])).toEqual([
      ["call-0", "allow"],
      ["call-1", "allow"],
    ]);
    const jtis = new Set(results.map((r) => r.grant?.jti));
    expect(jtis.size).toBe(2);
    expect(jtis.has(undefined)).toBe(false);
  });

  it("an Anthropic message with two tool_use blocks yields two results in order", async () => {
    const payload = {
      ...anthropicMessage,
      content: [
        ...anthropicMessage.content,
        { type: "tool_use", id: "toolu_e2e2", name: "repo_search", input: { workspace: WS, query: "sum" } },
      ],
    };
    const results = answerOf(await gw.propose(alice, { format: "anthropic", payload }));
    expect(results.map((r) => [r.call_id, r.tool, r.decision])).toEqual([
      ["toolu_e2e1", "repo_read", "allow"],
      ["toolu_e2e2", "repo_search", "allow"],
    ]);
  });
});

describe("malformed payloads are refused with HTTP 400 and field errors", () => {
  const malformed = [
    {
      name: "OpenAI arguments that are not JSON",
      format: "openai-chat",
      payload: {
        ...chatCompletion,
        choices: [
          {
            ...chatCompletion.choices[0],
            message: {
              role: "assistant",
              content: null,
              tool_calls: [
                { id: "call_bad", type: "function", function: { name: "repo_read", arguments: "{not json" } },
              ],
            },
          },
        ],
      },
      pointer: "/choices/0/message/tool_calls/0/function/arguments",
    },
    {
      name: "an extra field in an OpenAI tool call",
      format: "openai-chat",
      payload: { ...chatItem, extra: true },
      pointer: "/extra",
    },
    {
      name: "an Anthropic tool_use whose input is not an object",
      format: "anthropic",
      payload: {
        ...anthropicMessage,
        content: [{ type: "tool_use", id: "toolu_bad", name: "repo_read", input: "README.md" }],
      },
      pointer: "/content/0/input",
    },
    {
      name: "an incomplete Responses function_call",
      format: "openai-responses",
      payload: {
        ...responsesOutput,
        output: [{ ...responsesOutput.output[1], status: "in_progress" }],
      },
      pointer: "/output/0/status",
    },
    {
      name: "an MCP request for another method",
      format: "mcp",
      payload: { ...mcpRequest, method: "tools/list" },
      pointer: "/method",
    },
    {
      name: "a canonical call without tool",
      format: "canonical",
      payload: { arguments: README_ARGS },
      pointer: "/tool",
    },
    {
      name: "a payload that is not an object",
      format: "auto",
      payload: [chatItem],
      pointer: "",
    },
    {
      name: "a payload whose format cannot be told",
      format: "auto",
      payload: { hello: "world" },
      pointer: "",
    },
    {
      name: "two calls with the same id",
      format: "openai-chat",
      payload: { role: "assistant", tool_calls: [chatItem, chatItem] },
      pointer: "/tool_calls/1",
    },
    {
      name: "a text-only answer (no call at all)",
      format: "anthropic",
      payload: { ...anthropicMessage, content: [{ type: "text", text: "done" }] },
      pointer: "",
    },
  ] as const;

  for (const m of malformed) {
    it(m.name, async () => {
      const requestId = `malformed-${m.name}`;
      const error = errorOf(
        await gw.propose(alice, { format: m.format, payload: m.payload }, requestId),
        400,
      );
      expect(error).toMatchObject({
        status: "failed",
        category: "invalid_argument",
        effect_committed: false,
      });
      expect(error.field_errors.map((f) => f.path)).toContain(m.pointer);
      for (const f of error.field_errors) expect(f.message).not.toBe("");
      expect(error.suggested_fix).not.toBe("");
    });
  }

  it("a request body with an unknown field or a bad format names it", async () => {
    const extra = errorOf(
      await gw.request("POST", "/v1/proposals", { token: alice, body: { payload: chatItem, dry: true } }),
      400,
    );
    expect(extra.category).toBe("invalid_argument");
    expect(extra.field_errors.map((f) => f.message).join(" ")).toContain("dry");

    const format = errorOf(
      await gw.request("POST", "/v1/proposals", {
        token: alice,
        body: { format: "gemini", payload: chatItem },
      }),
      400,
    );
    expect(format.category).toBe("invalid_argument");
    expect(format.field_errors.map((f) => f.path)).toContain("/format");
  });

  it("a body that is not JSON is invalid_argument", async () => {
    const error = errorOf(await gw.request("POST", "/v1/proposals", { token: alice, rawBody: "{oops" }), 400);
    expect(error.category).toBe("invalid_argument");
  });

  it("a malformed payload is logged as an intake error", async () => {
    const requestId = "malformed-logged";
    errorOf(await gw.propose(alice, { format: "mcp", payload: { jsonrpc: "1.0" } }, requestId), 400);
    const entries = await logEntries(gw, { decision: "error" });
    const entry = entries.find((e) => e.caller_request_id === requestId);
    expect(entry).toMatchObject({ path: "writ/intake", decision: "error", error: "invalid_argument" });
  });
});

it("the decision log verifies after every decision above", async () => {
  await expectLogVerifies(gw);
});
