/**
 * Two Writ processes on one PostgreSQL database, and one backend both call: committing calls of
 * one concurrency group never overlap across the instances (the backend counts the calls in
 * flight), and a group lease left by a crashed instance is taken over once it expired.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalCall, onlyOutcome } from "../e2e/api.ts";
import { ALLOW_ALL_POLICY, type CountingBackend, startCountingBackend } from "../support/counting-backend.ts";
import { answerOf } from "../support/gateway.ts";
import {
  type Deployment,
  startDeployment,
  WITH_CHILDREN_MS,
  type WritProcess,
} from "../support/instances.ts";
import { postgresUnavailable, sql, startTestPostgres, type TestPostgres } from "../support/postgres.ts";

describe.skipIf(postgresUnavailable !== undefined)("concurrency groups across two instances", () => {
  let server: TestPostgres;
  let databaseUrl: string;
  let backend: CountingBackend;
  let deployment: Deployment;
  let a: WritProcess;
  let b: WritProcess;
  let token: string;

  beforeAll(async () => {
    server = await startTestPostgres();
    databaseUrl = await server.createDatabase("writ_groups");
    backend = await startCountingBackend(40);
    deployment = await startDeployment({ postgres: databaseUrl }, async (document, tmp) => {
      await writeFile(path.join(tmp, "policies", "writ", "decision.rego"), ALLOW_ALL_POLICY);
      const tools = Array.isArray(document.tools) ? document.tools : [];
      return {
        ...document,
        scheduling: { group_lease_ms: 1000, group_max_wait_ms: 10_000 },
        tools: [
          ...tools,
          {
            name: "ledger.post",
            version: "1",
            description: "Post an entry to the ledger",
            side_effect: "committing",
            idempotency: "none",
            concurrency_group: "ledger",
            timeout_ms: 8000,
            input_schema: {
              type: "object",
              additionalProperties: false,
              required: ["entry"],
              properties: { entry: { type: "string" } },
            },
            backend: { kind: "http", method: "POST", url: `${backend.url}/post` },
          },
        ],
      };
    });
    [a, b] = await Promise.all([deployment.start(), deployment.start()]);
    token = await deployment.token("alice");
  }, WITH_CHILDREN_MS);
  afterAll(async () => {
    await deployment?.close();
    await backend?.close();
    await server?.stop();
  });

  async function post(instance: WritProcess, entry: string) {
    const response = await fetch(`${instance.url}/v1/proposals`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        format: "canonical",
        payload: canonicalCall("ledger_post", { entry }),
        execute: true,
      }),
    });
    return onlyOutcome(await answerOf(response));
  }

  it("never run two committing calls of one group at once, whichever instance runs them", async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) => post(i % 2 === 0 ? a : b, `e${i}`)),
    );
    expect(outcomes.map((o) => [o.decision, o.error?.category])).toEqual(
      outcomes.map(() => ["allow", undefined]),
    );
    expect(backend.calls).toBe(12);
    expect(backend.peak).toBe(1);
    // Every lease was given up after its call.
    expect(await sql(databaseUrl, "SELECT grp FROM group_leases")).toEqual([]);
  }, 30_000);

  it("take over a lease a crashed instance left, once it expired", async () => {
    const expiry = Date.now() + 1500;
    await sql(databaseUrl, "INSERT INTO group_leases (grp, holder, lease_until) VALUES ($1, $2, $3)", [
      "ledger",
      "crashed-instance",
      expiry,
    ]);
    const before = backend.calls;
    const outcome = await post(b, "after-crash");
    expect(outcome.error).toBeUndefined();
    expect(backend.calls).toBe(before + 1);
    expect(backend.starts.at(-1)).toBeGreaterThanOrEqual(expiry);
  }, 30_000);
});
