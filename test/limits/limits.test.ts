/**
 * Budgets and rate limits through real HTTP on loopback: the default configuration's limit on
 * repo.search (30 per minute per subject), a value budget on payment drafts, the policy deciding
 * on `input.context.usage`, and /mcp's answer over a limit. The gateway's clock is fixed, so a
 * bucket refills only when a test moves it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { type Outcome, onlyOutcome, outcomeSchema, README_ARGS, WS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { postMcp } from "../support/mcp-client.ts";

const T0 = new Date("2030-06-01T12:00:00.000Z");
const SEARCH = { workspace: WS, query: "sum" };

const limitedAnswerSchema = z.object({ results: z.array(outcomeSchema) });

/** The one outcome of an answer refused by a limit (429). */
function limitedOutcome(answer: { status: number; text: string; json: unknown }): Outcome {
  expect(answer.status, answer.text).toBe(429);
  const [only] = limitedAnswerSchema.parse(answer.json).results;
  if (only === undefined) throw new Error("no result");
  return only;
}

describe("limits over HTTP", () => {
  let gw: TestGateway;
  let clock = T0;

  beforeAll(async () => {
    gw = await startTestGateway({
      configure: (document) => ({
        ...document,
        limits: [
          ...z.array(z.unknown()).parse(document.limits ?? []),
          {
            name: "drafts",
            match: { tools: ["create_payment_draft"] },
            value: { pointer: "/amount", max: 100, window_s: 86_400 },
          },
        ],
      }),
    });
    gw.gateway.now = () => clock;
  });
  afterAll(async () => {
    await gw?.close();
  });

  const propose = async (token: string, tool: string, args: Record<string, unknown>) =>
    gw.propose(token, { format: "canonical", payload: { tool, arguments: args } });

  it("refuses the 31st repo.search in a minute with 429, Retry-After and retry_after; it consumes nothing", async () => {
    const alice = await gw.token("alice");
    for (let i = 0; i < 30; i++) {
      expect(onlyOutcome(await propose(alice, "repo_search", SEARCH)).decision).toBe("allow");
    }
    const answer = await propose(alice, "repo_search", SEARCH);
    const refused = limitedOutcome(answer);
    // 30 per 60 s refills one call every 2 s. The body is the refusal (a WritError, as every 4xx)
    // with the calls' results beside it.
    expect(answer.headers.get("retry-after")).toBe("2");
    expect(writErrorSchema.parse(answer.json)).toMatchObject({ category: "rate_limited", retry_after: 2 });
    expect(refused).toMatchObject({
      decision: "deny",
      error: { category: "rate_limited", retryable: true, retry_after: 2, effect_committed: false },
      reasons: [{ code: "rate_limited", visible_to_model: true }],
    });
    expect(refused.grant).toBeUndefined();
    expect(refused.error?.message).toContain("repo-search");
    expect(refused.error?.suggested_fix).toContain("2 s");

    // Its log entry: denied for the limit, the policy's own allow kept as the result.
    await gw.gateway.log.drain();
    const entry = await gw.gateway.store.getDecision(refused.decision_id);
    expect(entry).toMatchObject({ decision: "deny", error: "rate_limited", grant_jti: null });
    expect(entry?.result).toMatchObject({ decision: "allow" });
    expect(entry?.input).toMatchObject({
      context: {
        usage: { "repo-search": { kind: "calls", used: 30, limit: 30, remaining: 0, window_s: 60 } },
      },
    });

    // Another subject has its own bucket; repo.read is not limited.
    await gw.gateway.store.putResource({
      type: "workspace",
      id: "ws-bob",
      owner: "bob",
      tenant: "demo",
      attributes: {},
    });
    const bob = await gw.token("bob");
    expect(onlyOutcome(await propose(bob, "repo_search", { ...SEARCH, workspace: "ws-bob" })).decision).toBe(
      "allow",
    );
    expect(onlyOutcome(await propose(alice, "repo_read", README_ARGS)).decision).toBe("allow");

    // The refusal consumed nothing: 2 s later exactly one call fits again.
    clock = new Date(T0.getTime() + 2000);
    expect(onlyOutcome(await propose(alice, "repo_search", SEARCH)).decision).toBe("allow");
    expect(limitedOutcome(await propose(alice, "repo_search", SEARCH)).error?.retry_after).toBe(2);

    const metrics = (await gw.request("GET", "/metrics")).text;
    expect(metrics).toContain('writ_limit_refusals_total{limit="repo-search"} 2');
    expect(metrics).toContain('writ_limit_charged_total{limit="repo-search"} 32');
  });

  it("releases the Idempotency-Key of a 429, so the retry after Retry-After runs", async () => {
    clock = new Date(T0.getTime() + 360_000);
    const alice = await gw.token("alice");
    for (let i = 0; i < 30; i++) {
      expect(onlyOutcome(await propose(alice, "repo_search", SEARCH)).decision).toBe("allow");
    }
    const executed = () =>
      gw.request("POST", "/v1/proposals", {
        token: alice,
        headers: { "idempotency-key": "limited-1" },
        body: { format: "canonical", payload: { tool: "repo_search", arguments: SEARCH }, execute: true },
      });
    const refused = await executed();
    expect(refused.status).toBe(429);
    clock = new Date(clock.getTime() + 2000);
    const retried = onlyOutcome(await executed());
    expect(retried.decision).toBe("allow");
    expect(retried.result).toBeDefined();
  });

  it("caps the sum of a value budget: 60 and 30 pass under 100, 20 is refused and consumes nothing", async () => {
    const alice = await gw.token("alice");
    const draft = (amount: number) =>
      propose(alice, "create_payment_draft", { account: "acct-alice", amount, currency: "EUR" });
    expect(onlyOutcome(await draft(60)).decision).toBe("allow_with_conditions");
    expect(onlyOutcome(await draft(30)).decision).toBe("allow_with_conditions");
    const answer = await draft(20);
    const refused = limitedOutcome(answer);
    expect(refused.error).toMatchObject({ category: "rate_limited", retryable: true });
    // 10 over a budget of 100 per day drains in 8,640 s.
    expect(refused.error?.retry_after).toBe(8640);
    expect(answer.headers.get("retry-after")).toBe("8640");
    // Nothing of the 20 was counted: 10 still fits, exactly.
    expect(onlyOutcome(await draft(10)).decision).toBe("allow_with_conditions");
    expect(limitedOutcome(await draft(0.5)).error?.category).toBe("rate_limited");
  });

  it("shows the usage to the policy, and a denied call consumes nothing", async () => {
    const original = await import("node:fs/promises").then((fs) => fs.readFile(gw.decisionRego, "utf8"));
    const revision = gw.gateway.policy.revision;
    await gw.writePolicy(`${original}
denials contains {"code": "search_budget_low", "message": "fewer than 28 searches left this minute", "visible_to_model": true} if {
	input.context.usage["repo-search"].remaining < 28
}
`);
    await expect.poll(() => gw.gateway.policy.revision, { timeout: 10_000 }).not.toBe(revision);
    // A minute later alice's search bucket is empty again.
    clock = new Date(T0.getTime() + 1_200_000);
    try {
      const alice = await gw.token("alice");
      for (let i = 0; i < 3; i++) {
        expect(onlyOutcome(await propose(alice, "repo_search", SEARCH)).decision).toBe("allow");
      }
      for (let i = 0; i < 2; i++) {
        const denied = onlyOutcome(await propose(alice, "repo_search", SEARCH));
        expect(denied.decision).toBe("deny");
        expect(denied.error?.category).toBe("policy_denied");
        expect(denied.reasons.map((r) => r.code)).toEqual(["search_budget_low"]);
        await gw.gateway.log.drain();
        // Both denials saw the same usage: the first consumed nothing.
        expect((await gw.gateway.store.getDecision(denied.decision_id))?.input).toMatchObject({
          context: { usage: { "repo-search": { used: 3, remaining: 27 } } },
        });
      }
    } finally {
      const current = gw.gateway.policy.revision;
      await gw.writePolicy(original);
      await expect.poll(() => gw.gateway.policy.revision, { timeout: 10_000 }).not.toBe(current);
    }
  });

  it("answers an MCP tools/call over a limit with a tool error carrying retry_after", async () => {
    clock = new Date(T0.getTime() + 2_400_000);
    const alice = await gw.token("alice");
    const call = (id: number) =>
      postMcp(gw.url, alice, {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "repo_search", arguments: SEARCH },
      });
    for (let i = 0; i < 30; i++) {
      const ok = z
        .object({ result: z.object({ isError: z.boolean().optional() }) })
        .parse(await (await call(i)).json());
      expect(ok.result.isError).toBeUndefined();
    }
    const response = await call(30);
    expect(response.status).toBe(200);
    const refused = z
      .object({
        result: z.object({
          isError: z.literal(true),
          content: z.array(z.object({ type: z.literal("text"), text: z.string() })),
          structuredContent: z.object({
            error: z.object({ category: z.string(), retryable: z.boolean(), retry_after: z.number() }),
            decision: z.string(),
          }),
        }),
      })
      .parse(await response.json());
    expect(refused.result.structuredContent.error).toMatchObject({
      category: "rate_limited",
      retryable: true,
      retry_after: 2,
    });
    expect(refused.result.structuredContent.decision).toBe("deny");
    expect(refused.result.content[0]?.text).toMatch(/^rate_limited: /);
  });
});
