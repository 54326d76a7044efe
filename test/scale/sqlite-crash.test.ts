/**
 * A Writ process on a SQLite file (the embedded default), killed with SIGKILL under load: every
 * decision it answered with is in the log its writer thread committed, and the log verifies.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { DecisionLog } from "../../src/decisionlog/index.ts";
import { SqliteStore } from "../../src/store/index.ts";
import { canonicalCall, onlyOutcome, README_ARGS } from "../e2e/api.ts";
import { answerOf } from "../support/gateway.ts";
import { type Deployment, startDeployment } from "../support/instances.ts";

const decisionIdRowSchema = z.object({ id: z.string() });

describe("Writ on SQLite killed with SIGKILL mid-load", () => {
  let tmp: string;
  let file: string;
  let deployment: Deployment;
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "writ-crash-"));
    file = path.join(tmp, "writ.db");
    deployment = await startDeployment({ sqlite: file });
  }, 60_000);
  afterAll(async () => {
    await deployment?.close();
    await rm(tmp, { recursive: true, force: true });
  });

  it("loses no decision it answered with", async () => {
    const victim = await deployment.start();
    const token = await deployment.token("alice");
    const answered: string[] = [];
    let failures = 0;
    let killed = false;
    const worker = async () => {
      while (!killed) {
        try {
          const response = await fetch(`${victim.url}/v1/proposals`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ format: "canonical", payload: canonicalCall("repo_read", README_ARGS) }),
          });
          const outcome = onlyOutcome(await answerOf(response));
          if (outcome.grant !== undefined) answered.push(outcome.decision_id);
        } catch {
          failures += 1;
          return;
        }
      }
    };
    const workers = Array.from({ length: 16 }, worker);
    while (answered.length < 300) await new Promise((resolve) => setTimeout(resolve, 5));
    victim.child.kill("SIGKILL");
    await new Promise<void>((resolve) => victim.child.once("exit", () => resolve()));
    killed = true;
    await Promise.all(workers);
    expect(failures).toBeGreaterThan(0);

    const db = new Database(file, { readonly: true });
    const logged = new Set(
      db
        .prepare("SELECT json_extract(entry, '$.decision_id') AS id FROM decisions")
        .all()
        .map((row) => decisionIdRowSchema.parse(row).id),
    );
    db.close();
    expect(answered.filter((id) => !logged.has(id))).toEqual([]);
    const store = await SqliteStore.open(file);
    try {
      expect(await new DecisionLog(store).verify()).toMatchObject({ ok: true });
    } finally {
      await store.close();
    }
  }, 60_000);
});
