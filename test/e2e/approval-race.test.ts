/**
 * Proposals of one identical call racing on two instances of one store open exactly one approval
 * request (issue 27): the others get it back. On one SQLite file (each instance writes through its
 * own connection and writer thread) and on one PostgreSQL database.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { postgresUnavailable, startTestPostgres, type TestPostgres } from "../support/postgres.ts";
import { canonicalCall, onlyOutcome, readForEdit, WS } from "./api.ts";

const SUM = "src/sum.ts";
const ROUNDS = 8;
const PER_INSTANCE = 3;

describe.each(["sqlite", "postgres"] as const)("racing proposals of one call, on %s", (kind) => {
  const skip = kind === "postgres" && postgresUnavailable !== undefined;
  let postgres: TestPostgres | undefined;
  let dir: string;
  let instances: TestGateway[] = [];
  beforeAll(async () => {
    if (skip) return;
    dir = await mkdtemp(path.join(os.tmpdir(), "writ-approval-race-"));
    let store: Record<string, unknown> = { sqlite: path.join(dir, "writ.db") };
    if (kind === "postgres") {
      postgres = await startTestPostgres();
      store = { postgres: { url: await postgres.createDatabase("writ_approval_race") } };
    }
    instances = [];
    for (let i = 0; i < 2; i++) {
      instances.push(await startTestGateway({ configure: (document) => ({ ...document, store }) }));
    }
  }, 90_000);
  afterAll(async () => {
    for (const gw of instances) await gw.close();
    await postgres?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(skip)("open exactly one request, which every proposal gets back", async () => {
    const [a, b] = instances;
    if (a === undefined || b === undefined) throw new Error("two instances");
    const tokens = await Promise.all(instances.map((gw) => gw.token("alice")));
    const base_hash = await readForEdit(a, tokens[0] ?? "", SUM);
    for (let round = 0; round < ROUNDS; round++) {
      const args = { workspace: WS, path: SUM, base_hash, before: "a - b", after: `a + b /* ${round} */` };
      const body = { format: "canonical", payload: canonicalCall("repo_apply_edit", args) };
      const answers = await Promise.all(
        instances.flatMap((gw, i) => Array.from({ length: PER_INSTANCE }, () => gw.propose(tokens[i], body))),
      );
      const ids = answers.map((answer) => {
        const outcome = onlyOutcome(answer);
        expect(outcome.decision).toBe("require_approval");
        return z.string().parse(outcome.approval?.id);
      });
      expect(new Set(ids).size, `round ${round}: ${ids.join(" ")}`).toBe(1);
    }
    const carol = await a.token("carol", { roles: ["maintainer"] });
    const listed = await a.request("GET", "/v1/approvals?status=pending", { token: carol });
    const pending = z.object({ approvals: z.array(z.object({ id: z.string() })) }).parse(listed.json);
    expect(pending.approvals).toHaveLength(ROUNDS);
  });
});
