/**
 * Head anchoring end to end: a real gateway checkpoints its log (on demand, and at close) into the
 * store and a witness file; then `writ logs verify` runs against copies of its SQLite file,
 * tampered with behind Writ's back: the tail cut off (exit 1), the tail cut and rewritten (exit 1),
 * the checkpoints deleted too (the witness still catches it), a forged checkpoint (exit 1).
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { CompactSign, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { DecisionLog } from "../../src/decisionlog/index.ts";
import { SqliteStore } from "../../src/store/index.ts";
import { canonicalCall, README_ARGS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { runLogs } from "./logs-helpers.ts";

let tmp: string;
let db: string;
let witness: string;
let gw: TestGateway | undefined;
let headSeq = 0;
let scenarios = 0;

const witnessLineSchema = z.object({
  seq: z.number(),
  hash: z.string(),
  time: z.string(),
  kid: z.string(),
  jws: z.string(),
});
const jwksSchema = z.object({
  keys: z.array(z.object({ kid: z.string(), use: z.string(), alg: z.string() })),
});

async function witnessLines(file = witness) {
  const text = await readFile(file, "utf8");
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => witnessLineSchema.parse(JSON.parse(line)));
}

/** A copy of the closed gateway's store (and witness), with a config naming it. */
async function scenario(): Promise<{ config: string; db: string; witness: string }> {
  scenarios += 1;
  const copy = {
    db: path.join(tmp, `s${scenarios}.db`),
    witness: path.join(tmp, `s${scenarios}.ndjson`),
    config: path.join(tmp, `s${scenarios}.yaml`),
  };
  await copyFile(db, copy.db);
  await copyFile(witness, copy.witness);
  await writeFile(copy.config, `store:\n  sqlite: ${JSON.stringify(copy.db)}\n`);
  return copy;
}

function sqlite(file: string, statement: string): number {
  const handle = new Database(file);
  try {
    return handle.prepare(statement).run().changes;
  } finally {
    handle.close();
  }
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "writ-checkpoints-"));
  db = path.join(tmp, "writ.db");
  witness = path.join(tmp, "witness.ndjson");
  gw = await startTestGateway({
    configure: (document) => ({
      ...document,
      store: { sqlite: db },
      decision_log: { checkpoints: { interval_s: 3600 }, witness: { file: witness } },
    }),
  });
});

afterAll(async () => {
  await gw?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

async function propose(running: TestGateway, count: number): Promise<void> {
  const token = await running.token("alice");
  for (let i = 0; i < count; i++) {
    const answer = await running.propose(token, {
      format: "canonical",
      payload: canonicalCall("repo.read", README_ARGS),
    });
    expect(answer.status).toBe(200);
  }
}

describe("checkpoints written by the gateway", () => {
  it("signs the head with a key of its own, published apart from the grant keys", async () => {
    const running = gw!;
    await propose(running, 3);
    const checkpoint = await running.gateway.checkpoints?.checkpoint();
    expect(checkpoint?.seq).toBe(3);
    // Nothing new: no second checkpoint of the same head.
    expect(await running.gateway.checkpoints?.checkpoint()).toBeUndefined();

    const keys = jwksSchema.parse(
      (await running.request("GET", "/.well-known/writ-checkpoint-keys.json")).json,
    );
    const grantKeys = jwksSchema.parse((await running.request("GET", "/.well-known/jwks.json")).json);
    expect(keys.keys.map((k) => k.kid)).toContain(checkpoint?.kid);
    expect(grantKeys.keys.map((k) => k.kid)).not.toContain(checkpoint?.kid);
    expect((await witnessLines()).map((c) => c.seq)).toEqual([3]);

    // An operator verifying against the published keys (not the store's copy of them).
    await writeFile(path.join(tmp, "live.yaml"), `store:\n  sqlite: ${JSON.stringify(db)}\n`);
    const run = await runLogs([
      "verify",
      "--config",
      path.join(tmp, "live.yaml"),
      "--keys",
      `${running.url}/.well-known/writ-checkpoint-keys.json`,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.join("\n")).toContain("checkpoints: 1 checked (store 1); newest valid at seq 3");
  });

  it("checkpoints once more at close, and ships it to the witness", async () => {
    await propose(gw!, 2);
    await gw!.close();
    gw = undefined;
    const handle = new Database(db, { readonly: true });
    headSeq = z
      .object({ seq: z.number() })
      .parse(handle.prepare("SELECT max(seq) AS seq FROM decisions").get()).seq;
    handle.close();
    expect(headSeq).toBeGreaterThanOrEqual(5);
    expect((await witnessLines()).map((c) => c.seq)).toEqual([3, headSeq]);
  });
});

describe("writ logs verify against checkpoints", () => {
  it("an intact log with checkpoints passes, the witness's too", async () => {
    const s = await scenario();
    const run = await runLogs(["verify", "--config", s.config, "--witness", s.witness]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.join("\n")).toContain(
      `checkpoints: 4 checked (store 2, ${s.witness} 2); newest valid at seq ${headSeq}`,
    );
  });

  it("exit 1 when the newest entries were deleted behind Writ's back", async () => {
    const s = await scenario();
    expect(sqlite(s.db, `DELETE FROM decisions WHERE seq > ${headSeq - 2}`)).toBe(2);
    const run = await runLogs(["verify", "--config", s.config]);
    expect(run.code).toBe(1);
    const out = run.stdout.join("\n");
    expect(out).toContain(`broken: the chain of ${headSeq - 2} entries links up`);
    expect(out).toContain(`checkpoint of seq ${headSeq}`);
    expect(out).toContain("log_ends_before");
    expect(run.stderr).toContain(`ends at seq ${headSeq - 2}, before its checkpoint of seq ${headSeq}`);
    const json = await runLogs(["verify", "--config", s.config, "--format", "json"]);
    expect(JSON.parse(json.stdout.join(""))).toMatchObject({
      ok: false,
      checkpoints: { problems: [{ source: "store", seq: headSeq, reason: "log_ends_before" }] },
    });
  });

  it("exit 1 when the tail was cut and new entries written in its place", async () => {
    const s = await scenario();
    sqlite(s.db, `DELETE FROM decisions WHERE seq > 2`);
    const store = await SqliteStore.open(s.db);
    const log = new DecisionLog(store);
    for (let i = 0; i < headSeq; i++) {
      await log.append({
        path: "writ/decision",
        input: {},
        policy_revision: "x",
        subject: "mallory",
        tenant: "demo",
        action: null,
        resource: null,
        decision: "allow",
        request_id: `r${i}`,
      });
    }
    await store.close();
    const run = await runLogs(["verify", "--config", s.config]);
    expect(run.code).toBe(1);
    expect(run.stdout.join("\n")).toContain(`checkpoint of seq 3`);
    expect(run.stdout.join("\n")).toContain("hash_mismatch");
  });

  it("with the checkpoints deleted too, the witness still shows the cut", async () => {
    const s = await scenario();
    sqlite(s.db, `DELETE FROM decisions WHERE seq > 1`);
    sqlite(s.db, "DELETE FROM checkpoints");
    expect((await runLogs(["verify", "--config", s.config])).code).toBe(0);
    const run = await runLogs(["verify", "--config", s.config, "--witness", s.witness]);
    expect(run.code).toBe(1);
    expect(run.stdout.join("\n")).toMatch(/checkpoint of seq 3 .* from .*\.ndjson: log_ends_before/);
  });

  it("a forged checkpoint (signed with another key) is reported, in the store and at the witness", async () => {
    const s = await scenario();
    const { privateKey } = await generateKeyPair("EdDSA");
    const kid = (await witnessLines(s.witness))[0]?.kid ?? "";
    const payload = { seq: headSeq + 50, hash: "f".repeat(64), time: new Date().toISOString() };
    const forged = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: "EdDSA", kid, typ: "writ-checkpoint+jws" })
      .sign(privateKey);
    sqlite(
      s.db,
      `INSERT INTO checkpoints (seq, hash, time, kid, jws) VALUES (${payload.seq}, '${payload.hash}', '${payload.time}', '${kid}', '${forged}')`,
    );
    await writeFile(s.witness, `${JSON.stringify({ ...payload, kid, jws: forged })}\nnot json\n`, {
      flag: "a",
    });
    const run = await runLogs(["verify", "--config", s.config, "--witness", s.witness]);
    expect(run.code).toBe(1);
    const out = run.stdout.join("\n");
    expect(out).toMatch(/from store: bad_signature/);
    expect(out).toMatch(/\.ndjson: bad_signature/);
    expect(out).toMatch(/line 4 from .*: malformed/);
  });

  it("exit 3 when the witness cannot be read", async () => {
    const s = await scenario();
    const run = await runLogs(["verify", "--config", s.config, "--witness", path.join(tmp, "absent.ndjson")]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("next:");
  });
});
