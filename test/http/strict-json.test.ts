/**
 * The HTTP API reads every JSON body strictly, over real HTTP on loopback: a repeated key or a
 * `__proto__` key anywhere is 400 `invalid_argument` with a field error at its JSON Pointer, and a
 * refused proposal is in the decision log, exactly as /mcp refuses the same arguments
 * (test/mcp/strict-input.test.ts).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { fieldErrorSchema } from "../../src/core/errors.ts";
import { errorOf, logEntries } from "../e2e/api.ts";
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
