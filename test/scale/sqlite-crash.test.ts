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
import { type Deployment, killMidLoad, startDeployment, WITH_CHILDREN_MS } from "../support/instances.ts";

const decisionIdRowSchema = z.object({ id: z.string() });

describe("Writ on SQLite killed with SIGKILL mid-load", () => {
  let tmp: string;
  let file: string;
  let deployment: Deployment;
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "writ-crash-"));
    file = path.join(tmp, "writ.db");
    deployment = await startDeployment({ sqlite: file });
  }, WITH_CHILDREN_MS);
  afterAll(async () => {
    await deployment?.close();
    await rm(tmp, { recursive: true, force: true });
  });

  it(
    "loses no decision it answered with",
    async () => {
      const victim = await deployment.start();
      const token = await deployment.token("alice");
      const { granted, failures } = await killMidLoad(victim, token, 300);
      const answered = granted.map((outcome) => outcome.decision_id);
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
    },
    WITH_CHILDREN_MS,
  );
});
