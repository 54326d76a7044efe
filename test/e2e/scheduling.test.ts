/**
 * Scheduling over real HTTP: a proposal's read-only calls reach their backend side by side,
 * and a call whose concurrency group stays busy past its bound is a retryable `conflict` on
 * every entrance (a proposal's outcome, 409 on POST /v1/execute, a tool error over MCP), with
 * `/metrics` counting the waits.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ALLOW_ALL_POLICY, type CountingBackend, startCountingBackend } from "../support/counting-backend.ts";
import { answerOf, startTestGateway, type TestGateway } from "../support/gateway.ts";
import { postMcp } from "../support/mcp-client.ts";
import { canonicalCall, answerOf as resultsOf } from "./api.ts";
import { metricsText, sample } from "./metrics.ts";

function tool(name: string, url: string, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    name,
    version: "1",
    description: `the ${name} tool`,
    idempotency: "natural",
    input_schema: {
      type: "object",
      additionalProperties: false,
      required: ["note"],
      properties: { note: { type: "string" } },
    },
    backend: { kind: "http", method: "POST", url },
    ...extra,
  };
}

const errorSchema = z.object({ category: z.string(), retryable: z.boolean(), effect_committed: z.unknown() });

let backend: CountingBackend;
let gw: TestGateway;
let token: string;
beforeAll(async () => {
  backend = await startCountingBackend(50);
  gw = await startTestGateway({
    configure: (document, tmp) => {
      writeFileSync(path.join(tmp, "policies", "writ", "decision.rego"), ALLOW_ALL_POLICY);
      const tools = Array.isArray(document.tools) ? document.tools : [];
      return {
        ...document,
        tools: [
          ...tools,
          tool("notes.get", `${backend.url}/get`, { side_effect: "none" }),
          tool("ledger.post", `${backend.url}/post`, {
            side_effect: "committing",
            idempotency: "none",
            concurrency_group: "ledger",
          }),
        ],
        // The group's bound (the contract's timeout_ms, 10 s, is longer).
        scheduling: { group_max_wait_ms: 150 },
      };
    },
  });
  token = await gw.token("alice");
}, 30_000);
afterAll(async () => {
  await gw?.close();
  await backend?.close();
});

describe("scheduling over HTTP", () => {
  it("sends a proposal's read-only calls to their backend side by side", async () => {
    backend.peak = 0;
    const answer = await gw.propose(token, {
      format: "canonical",
      payload: { calls: ["a", "b", "c"].map((note) => canonicalCall("notes_get", { note })) },
      execute: true,
    });
    expect(resultsOf(answer).map((o) => o.error)).toEqual([undefined, undefined, undefined]);
    expect(backend.peak).toBe(3);
    const metrics = await metricsText(gw);
    expect(sample(metrics, 'writ_scheduled_calls_total{schedule="concurrent"}')).toBe(3);
  });

  it("refuses a call whose group stays busy past its bound on every entrance, retryably", async () => {
    backend.hold();
    const first = gw.propose(token, {
      format: "canonical",
      payload: canonicalCall("ledger_post", { note: "first" }),
      execute: true,
    });
    while (backend.inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    try {
      const [late] = resultsOf(
        await gw.propose(token, {
          format: "canonical",
          payload: canonicalCall("ledger_post", { note: "late" }),
          execute: true,
        }),
      );
      expect(late?.error).toMatchObject({ category: "conflict", retryable: true, effect_committed: false });

      const executed = await gw.request("POST", "/v1/execute", {
        token,
        body: { grant: late?.grant?.token, call: canonicalCall("ledger_post", { note: "late" }) },
      });
      expect(executed.status).toBe(409);
      expect(errorSchema.parse(executed.json)).toMatchObject({ category: "conflict", retryable: true });

      const mcp = await answerOf(
        await postMcp(gw.url, token, {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "ledger_post", arguments: { note: "mcp" } },
        }),
      );
      const called = z
        .object({
          result: z.object({ isError: z.literal(true), structuredContent: z.object({ error: errorSchema }) }),
        })
        .parse(mcp.json);
      expect(called.result.structuredContent.error).toMatchObject({ category: "conflict", retryable: true });
      expect(backend.inFlight).toBe(1);
    } finally {
      backend.release();
    }
    expect(resultsOf(await first)[0]?.error).toBeUndefined();
    const metrics = await metricsText(gw);
    expect(sample(metrics, 'writ_concurrency_group_waits_total{group="ledger",result="timed_out"}')).toBe(3);
    expect(sample(metrics, 'writ_concurrency_group_running{group="ledger"}')).toBe(0);
  });
});
