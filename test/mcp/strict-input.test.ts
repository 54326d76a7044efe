/**
 * /mcp reads its bodies as strictly as the HTTP API: over real HTTP on loopback, a repeated key or
 * a `__proto__` key is a JSON-RPC error naming where (`-32602` inside a tools/call's params,
 * `-32600` elsewhere), with the WritError in `error.data`; unparsable JSON is `-32700`; malformed
 * tools/call params are `-32602`, never a zod dump; refused calls are in the decision log. The SDK's
 * own client sees the same `-32602`.
 */
import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { logEntries } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { plainKeysArguments, refusedArguments } from "../support/strict-json-cases.ts";

let gw: TestGateway;
let token: string;

beforeAll(async () => {
  gw = await startTestGateway();
  token = await gw.token("dev");
}, 60_000);

afterAll(async () => {
  await gw?.close();
});

const errorResponseSchema = z.strictObject({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number(), z.null()]),
  error: z.strictObject({ code: z.number(), message: z.string(), data: writErrorSchema }),
});

async function post(body: string, requestId = randomUUID()) {
  const answer = await gw.request("POST", "/mcp", {
    token,
    rawBody: body,
    requestId,
    // JSON only: a tools/call from a caller that also accepts SSE is answered as a stream.
    headers: { accept: "application/json" },
  });
  return { ...answer, requestId };
}

const call = (args: string, id: number | string = 7) =>
  `{"jsonrpc": "2.0", "id": ${JSON.stringify(id)}, "method": "tools/call", "params": {"name": "repo_search", "arguments": ${args}}}`;

async function refusedEntries(requestId: string) {
  return (await logEntries(gw, { decision: "error" })).filter(
    (entry) => entry.caller_request_id === requestId,
  );
}

describe("/mcp refuses keys the HTTP API refuses", () => {
  it.each(refusedArguments)(
    "$name in tools/call arguments: -32602 naming the pointer, logged",
    async (bad) => {
      const answer = await post(call(bad.arguments));
      expect(answer.status, answer.text).toBe(200);
      const { id, error } = errorResponseSchema.parse(answer.json);
      expect(id).toBe(7);
      expect(error.code).toBe(-32602);
      expect(error.data.category).toBe("invalid_argument");
      expect(error.data.field_errors.map((field) => field.path)).toEqual([`/params/arguments${bad.pointer}`]);
      expect(error.data.suggested_fix).toMatch(/each key once per object/);
      expect(answer.text).not.toMatch(/"code":\s*"invalid_type"|ZodError/);
      const logged = await refusedEntries(answer.requestId);
      expect(logged.length).toBe(1);
      expect(logged[0]?.error).toBe("invalid_argument");
    },
  );

  it("takes constructor and prototype as plain keys: the tool's contract decides", async () => {
    const answer = await post(call(plainKeysArguments));
    expect(answer.status, answer.text).toBe(200);
    const result = z
      .object({
        result: z.object({
          isError: z.literal(true),
          structuredContent: z.object({ error: writErrorSchema }),
        }),
      })
      .parse(answer.json).result;
    expect(result.structuredContent.error.field_errors.map((field) => field.path)).toEqual([
      "/arguments/prototype",
    ]);
  });

  it("a repeated key outside a tools/call's params is an invalid request", async () => {
    const answer = await post('{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "method": "tools/call"}');
    expect(answer.status).toBe(400);
    const { id, error } = errorResponseSchema.parse(answer.json);
    expect(id).toBe(1);
    expect(error.code).toBe(-32600);
    expect(error.data.field_errors.map((field) => field.path)).toEqual(["/method"]);
  });

  it("refuses a whole batch when one of its messages is refused, saying which", async () => {
    const list = '{"jsonrpc": "2.0", "id": "a", "method": "tools/list"}';
    const answer = await post(`[${list}, ${call(refusedArguments[2]?.arguments ?? "", "b")}]`);
    const responses = z.array(errorResponseSchema).parse(answer.json);
    expect(responses.map((response) => [response.id, response.error.code])).toEqual([
      ["a", -32600],
      ["b", -32602],
    ]);
    expect(responses[1]?.error.data.field_errors[0]?.path).toBe("/1/params/arguments/options/deep/__proto__");
  });
});

describe("/mcp's JSON-RPC errors", () => {
  it("unparsable JSON is -32700 Parse error", async () => {
    const answer = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(answer.status).toBe(400);
    const { id, error } = errorResponseSchema.parse(answer.json);
    expect([id, error.code, error.data.category]).toEqual([null, -32700, "invalid_argument"]);
  });

  it("a message that is not JSON-RPC 2.0 is -32600 Invalid Request", async () => {
    const answer = await post('{"id": 1, "method": "tools/list"}');
    expect(answer.status).toBe(400);
    expect(errorResponseSchema.parse(answer.json).error.code).toBe(-32600);
  });

  it("malformed tools/call params are -32602 with field errors, not a zod dump, and logged", async () => {
    const answer = await post(call('["not", "an", "object"]'));
    const { error } = errorResponseSchema.parse(answer.json);
    expect(error.code).toBe(-32602);
    expect(error.data.field_errors).toEqual([
      { path: "/params/arguments", message: "arguments must be a JSON object, got an array" },
    ]);
    expect(answer.text).not.toMatch(/invalid_type|expected.*received/);
    expect((await refusedEntries(answer.requestId)).length).toBe(1);

    const unnamed = await post(
      '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"arguments": {}}}',
    );
    const refused = errorResponseSchema.parse(unnamed.json);
    expect([refused.id, refused.error.code]).toEqual([3, -32602]);
    expect(refused.error.data.field_errors.map((field) => field.path)).toEqual(["/params/name"]);
  });

  it("the SDK's client gets -32602 with the WritError for __proto__ in its arguments", async () => {
    const client = new Client({ name: "strict-input-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", gw.url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const args: unknown = JSON.parse(
        '{"workspace": "ws-demo", "query": "x", "o": {"__proto__": {"a": 1}}}',
      );
      const refused = await client
        .callTool({ name: "repo_search", arguments: z.record(z.string(), z.unknown()).parse(args) })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(McpError);
      const error = z.object({ code: z.number(), data: writErrorSchema }).parse(refused);
      expect(error.code).toBe(-32602);
      expect(error.data.field_errors[0]?.path).toBe("/params/arguments/o/__proto__");
    } finally {
      await client.close();
    }
  });
});
