/**
 * Request ids (issue 27): Writ keys its records by an id it mints for every request, never by the
 * `X-Request-Id` a caller sent, which is kept beside it (`caller_request_id`) only within hono's
 * bounds. A caller cannot store 12 KB in every entry nor make its entries pass for another
 * caller's. Over HTTP, on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestGateway } from "../support/gateway.ts";
import { postgresUnavailable } from "../support/postgres.ts";
import { startGatewayOn } from "../support/store-gateway.ts";
import { canonicalCall, expectLogVerifies, logEntries, onlyOutcome, README_ARGS } from "./api.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe.each(["sqlite", "postgres"] as const)("request ids, on %s", (kind) => {
  const skip = kind === "postgres" && postgresUnavailable !== undefined;
  let stop: (() => Promise<void>) | undefined;
  let gw: TestGateway;
  beforeAll(async () => {
    if (skip) return;
    ({ gw, stop } = await startGatewayOn(kind, "writ_request_ids"));
  }, 60_000);
  afterAll(async () => {
    await stop?.();
  });

  const read = (token: string, requestId: string) =>
    gw.request("POST", "/v1/proposals", {
      token,
      requestId,
      body: { format: "canonical", payload: canonicalCall("repo.read", README_ARGS) },
    });

  it.skipIf(skip)("a copied id names the copier's entries beside Writ's own, never alice's", async () => {
    const alice = await gw.token("alice");
    const bob = await gw.token("bob");
    const own = await read(alice, "alice-trace-7");
    const copied = await read(bob, "alice-trace-7");
    const ids = [own, copied].map((answer) => ({
      decision: onlyOutcome(answer).decision_id,
      header: answer.headers.get("x-request-id"),
    }));
    const entries = await logEntries(gw);
    const [mine, theirs] = ids.map(({ decision }) => entries.find((e) => e.decision_id === decision));
    expect(mine).toMatchObject({ subject: "alice", caller_request_id: "alice-trace-7" });
    expect(theirs).toMatchObject({ subject: "bob", caller_request_id: "alice-trace-7" });
    // Writ's ids: minted, distinct, answered in X-Request-Id, and the only ones that key records.
    expect(mine?.request_id).toMatch(UUID);
    expect(theirs?.request_id).toMatch(UUID);
    expect(mine?.request_id).not.toBe(theirs?.request_id);
    expect([mine?.request_id, theirs?.request_id]).toEqual(ids.map(({ header }) => header));
    expect(entries.filter((e) => e.request_id === mine?.request_id).map((e) => e.subject)).toEqual(["alice"]);
  });

  it.skipIf(skip)("an id out of bounds is not stored: 12 KB, or characters hono refuses", async () => {
    const alice = await gw.token("alice");
    for (const sent of ["r".repeat(12 * 1024), "trace 1/2", "x".repeat(256)]) {
      const answer = await read(alice, sent);
      const decision = onlyOutcome(answer).decision_id;
      const entry = (await logEntries(gw)).find((e) => e.decision_id === decision);
      expect(entry?.request_id).toMatch(UUID);
      expect(entry?.caller_request_id).toBeUndefined();
      expect(JSON.stringify(entry).length).toBeLessThan(4096);
    }
    await expectLogVerifies(gw);
  });
});
