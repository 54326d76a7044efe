/**
 * The HTTP API reads every JSON body strictly, over real HTTP on loopback: a repeated key or a
 * `__proto__` key anywhere is 400 `invalid_argument` with a field error at its JSON Pointer, and a
 * refused proposal is in the decision log, exactly as /mcp refuses the same arguments
 * (test/mcp/strict-input.test.ts).
 */
import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { fieldErrorSchema } from "../../src/core/errors.ts";
import { errorBodySchema, errorOf, logEntries } from "../e2e/api.ts";
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

const mcpProposal = (args: string) =>
  `{"format": "mcp", "payload": {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "repo_search", "arguments": ${args}}}}`;

describe("strict JSON bodies", () => {
  it.each(refusedArguments)("$name in a proposal: 400 naming the pointer, logged", async (bad) => {
    const requestId = randomUUID();
    const answer = await gw.request("POST", "/v1/proposals", {
      token,
      rawBody: mcpProposal(bad.arguments),
      requestId,
    });
    const error = errorOf(answer, 400);
    expect(error.category).toBe("invalid_argument");
    expect(error.field_errors.map((field) => field.path)).toEqual([
      `/payload/params/arguments${bad.pointer}`,
    ]);
    expect(error.suggested_fix).toMatch(/each key once per object/);
    const logged = (await logEntries(gw, { decision: "error" })).filter(
      (entry) => entry.caller_request_id === requestId,
    );
    expect(logged.map((entry) => entry.error)).toEqual(["invalid_argument"]);
  });

  it("takes constructor and prototype as plain keys: the tool's contract decides", async () => {
    const answer = await gw.request("POST", "/v1/proposals", {
      token,
      rawBody: mcpProposal(plainKeysArguments),
    });
    expect(answer.status, answer.text).toBe(200);
    const [result] = z
      .object({
        results: z.array(z.object({ error: z.object({ field_errors: z.array(fieldErrorSchema) }) })),
      })
      .parse(answer.json).results;
    expect(result?.error.field_errors.map((field) => field.path)).toEqual(["/arguments/prototype"]);
  });

  it("refuses the same keys in /v1/execute and /v1/resources bodies", async () => {
    const execute = await gw.request("POST", "/v1/execute", {
      token,
      rawBody: '{"grant": "g", "grant": "h", "tool": "repo.search"}',
    });
    expect(errorOf(execute, 400).field_errors.map((field) => field.path)).toEqual(["/grant"]);
    const admin = await gw.token("root", { roles: ["admin"] });
    const resource = await gw.request("PUT", "/v1/resources/workspace/ws-x", {
      token: admin,
      rawBody: '{"owner": "a", "attributes": {"__proto__": {"admin": true}}}',
    });
    expect(errorOf(resource, 400).field_errors.map((field) => field.path)).toEqual(["/attributes/__proto__"]);
  });
});

/** A POST whose body is exactly `body` (node:http: fetch would encode a string as UTF-8). */
function postBytes(route: string, body: Buffer, headers: Record<string, string>) {
  return new Promise<{ status: number; json: unknown }>((resolve, reject) => {
    const req = httpRequest(
      new URL(route, gw.url),
      {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": body.length, ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("bodies that are not UTF-8 (issue 27)", () => {
  /** A search for "ab" with one ill-formed sequence spliced in where `bad` is, and its offset. */
  const searchWith = (bad: Buffer) => {
    const [head, tail] = [
      '{"format": "canonical", "payload": {"tool": "repo.search", "arguments": {"workspace": "ws-demo", "query": "a',
      'b"}}}',
    ];
    return {
      body: Buffer.concat([Buffer.from(head ?? ""), bad, Buffer.from(tail ?? "")]),
      offset: Buffer.byteLength(head ?? ""),
    };
  };

  it.each([
    ["a lone continuation byte", [0x80]],
    ["an overlong slash", [0xc0, 0xaf]],
    ["a surrogate", [0xed, 0xa0, 0x80]],
    ["a sequence cut short", [0xe2, 0x82]],
    ["a code point past U+10FFFF", [0xf4, 0x90, 0x80, 0x80]],
  ])("%s: 400 invalid_argument naming the byte offset, on the API and on /mcp", async (_, bytes) => {
    const { body, offset } = searchWith(Buffer.from(bytes));
    const answer = await postBytes("/v1/proposals", body, { authorization: `Bearer ${token}` });
    expect(answer.status).toBe(400);
    const error = errorBodySchema.parse(answer.json);
    expect(error).toMatchObject({ category: "invalid_argument" });
    expect(error.message).toContain(`byte ${offset}`);

    const mcp = Buffer.concat([
      Buffer.from(
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "repo_search", "arguments": {"workspace": "ws-demo", "query": "a',
      ),
      Buffer.from(bytes),
      Buffer.from('b"}}}'),
    ]);
    const refused = await postBytes("/mcp", mcp, {
      authorization: `Bearer ${token}`,
      accept: "application/json, text/event-stream",
    });
    expect(refused.status).toBe(400);
    const rpc = z
      .object({ error: z.object({ code: z.number(), data: errorBodySchema }) })
      .parse(refused.json);
    expect(rpc.error.code).toBe(-32700);
    expect(rpc.error.data.message).toMatch(/byte \d+ is ill-formed/);
  });

  it("takes well-formed UTF-8 of every length as before", async () => {
    const { body } = searchWith(Buffer.from("é€😀", "utf8"));
    const answer = await postBytes("/v1/proposals", body, { authorization: `Bearer ${token}` });
    expect(answer.status).toBe(200);
  });
});
