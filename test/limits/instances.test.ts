/**
 * A limit holds across instances: two gateways (each its own store, connection pool and limits)
 * on one PostgreSQL database share the default configuration's repo.search bucket, 30 per minute
 * per subject. Their clocks are fixed, so the bucket does not refill during the test.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writErrorSchema } from "../../src/core/errors.ts";
import { canonicalCall, onlyOutcome, WS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { postgresUnavailable, startTestPostgres, type TestPostgres } from "../support/postgres.ts";

const T0 = new Date("2030-06-01T12:00:00.000Z");
const SEARCH = canonicalCall("repo_search", { workspace: WS, query: "sum" });

describe.skipIf(postgresUnavailable !== undefined)("limits across two instances on one PostgreSQL", () => {
  let postgres: TestPostgres;
  const gateways: TestGateway[] = [];

  beforeAll(async () => {
    postgres = await startTestPostgres();
    const url = await postgres.createDatabase("writ_limits");
    for (let i = 0; i < 2; i++) {
      const gw = await startTestGateway({
        configure: (document) => ({ ...document, store: { postgres: { url } } }),
      });
      gw.gateway.now = () => T0;
      gateways.push(gw);
    }
  }, 60_000);
  afterAll(async () => {
    for (const gw of gateways) await gw.close();
    await postgres?.stop();
  });

  it("refuses the 31st search, whichever instance gets it, with 429 and Retry-After", async () => {
    const [a, b] = gateways;
    if (a === undefined || b === undefined) throw new Error("two gateways");
    // Each test gateway trusts its own identity provider: alice has a token for each.
    const alice = new Map([
      [a, await a.token("alice")],
      [b, await b.token("alice")],
    ]);
    const search = (gw: TestGateway) => gw.propose(alice.get(gw), { format: "canonical", payload: SEARCH });
    // 40 concurrent searches split between the instances: exactly 30 fit in the bucket.
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => search(i % 2 === 0 ? a : b)));
    const allowed = answers.filter((answer) => answer.status === 200);
    const limited = answers.filter((answer) => answer.status === 429);
    expect(allowed).toHaveLength(30);
    expect(limited).toHaveLength(10);
    for (const answer of allowed) expect(onlyOutcome(answer).decision).toBe("allow");
    for (const answer of limited) {
      expect(answer.headers.get("retry-after")).toBe("2");
      expect(writErrorSchema.parse(answer.json)).toMatchObject({
        category: "rate_limited",
        retryable: true,
        retry_after: 2,
      });
    }
    // The refusals counted by the two instances add up to the 10 the shared bucket had no room for.
    const refusedBy = async (gw: TestGateway) =>
      (await gw.gateway.metrics.render()).match(
        /writ_limit_refusals_total\{limit="repo-search"\} (\d+)/,
      )?.[1];
    expect(Number((await refusedBy(a)) ?? 0) + Number((await refusedBy(b)) ?? 0)).toBe(10);
    expect((await search(a)).status).toBe(429);
    expect((await search(b)).status).toBe(429);
  });
});
