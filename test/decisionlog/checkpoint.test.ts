/**
 * The Checkpointer against a real SQLite store: a checkpoint every interval while the head moves
 * and none while it stands still; a URL witness on loopback that receives each checkpoint (with
 * its credentials) and serves them back for verification, and gets the ones it missed while it
 * was down; a log cut behind Writ's back refused at the next checkpoint; and the configuration.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.ts";
import { WritError } from "../../src/core/errors.ts";
import {
  Checkpointer,
  CheckpointKeys,
  checkCheckpoints,
  readWitness,
  witnessOf,
} from "../../src/decisionlog/index.ts";
import { SqliteStore } from "../../src/store/index.ts";
import { newEntry, tempDir } from "../store/fixtures.ts";

let tmp: ReturnType<typeof tempDir>;
let store: SqliteStore;
let keys: CheckpointKeys;

beforeEach(async () => {
  tmp = tempDir();
  store = tmp.track(await SqliteStore.open(tmp.file("writ.db")));
  keys = await CheckpointKeys.open(store.checkpointKeySet());
});
afterEach(async () => {
  await tmp.cleanup();
});

const append = (count: number) => store.appendDecisions(Array.from({ length: count }, () => newEntry()));

async function until(check: () => Promise<boolean>, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("Checkpointer", () => {
  it("checkpoints every interval while the head moves, and not while it stands still", async () => {
    const errors: unknown[] = [];
    const checkpointer = new Checkpointer({ store, keys, intervalMs: 40, onError: (e) => errors.push(e) });
    checkpointer.start();
    try {
      await append(2);
      await until(async () => (await store.latestCheckpoint())?.seq === 2);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect((await store.readCheckpoints(1, 10)).map((c) => c.seq)).toEqual([2]);
      await append(3);
      await until(async () => (await store.latestCheckpoint())?.seq === 5);
    } finally {
      await checkpointer.close();
    }
    expect(errors).toEqual([]);
  });

  it("refuses to checkpoint a log cut back behind its back, saying so", async () => {
    const errors: unknown[] = [];
    const checkpointer = new Checkpointer({ store, keys, intervalMs: 0, onError: (e) => errors.push(e) });
    await append(4);
    expect((await checkpointer.checkpoint())?.seq).toBe(4);
    const db = new Database(tmp.file("writ.db"));
    db.prepare("DELETE FROM decisions WHERE seq > 2").run();
    db.close();
    const refused = await checkpointer.checkpoint().catch((e: unknown) => e);
    if (!(refused instanceof WritError)) throw new Error(`expected a WritError, got ${String(refused)}`);
    expect(refused.message).toContain("ends at seq 2, before its checkpoint of seq 4");
    // Closing reports it too, and writes nothing.
    await checkpointer.close();
    expect(errors).toHaveLength(1);
    expect((await store.latestCheckpoint())?.seq).toBe(4);
  });
});

describe("a URL witness", () => {
  let server: Server;
  let url: string;
  const kept: string[] = [];
  const authorizations: Array<string | undefined> = [];
  let down = false;

  const body = async (request: IncomingMessage) => {
    let text = "";
    for await (const chunk of request) text += String(chunk);
    return text;
  };

  beforeEach(async () => {
    kept.length = 0;
    authorizations.length = 0;
    down = false;
    server = createServer(async (request, response) => {
      if (request.method === "POST") {
        authorizations.push(request.headers.authorization);
        const text = await body(request);
        if (down) {
          response.writeHead(503).end();
          return;
        }
        kept.push(text);
        response.writeHead(201).end();
        return;
      }
      response
        .writeHead(200, { "content-type": "application/x-ndjson" })
        .end(kept.map((l) => `${l}\n`).join(""));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no TCP address");
    url = `http://127.0.0.1:${address.port}/checkpoints`;
  });
  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it("receives each checkpoint with its credentials, serves them back, and gets the missed ones later", async () => {
    const errors: unknown[] = [];
    const witness = witnessOf({ url, credentials_ref: "witness", timeout_ms: 2000 }, async (ref) => ({
      authorization: `Bearer token-of-${ref}`,
    }));
    const checkpointer = new Checkpointer({
      store,
      keys,
      intervalMs: 0,
      witness,
      onError: (e) => errors.push(e),
    });
    await append(1);
    await checkpointer.checkpoint();
    down = true;
    await append(1);
    await checkpointer.checkpoint();
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toContain("did not reach the witness");
    down = false;
    await append(1);
    await checkpointer.checkpoint();
    expect(authorizations.every((a) => a === "Bearer token-of-witness")).toBe(true);
    const items = await readWitness(url);
    expect(items).toHaveLength(3);
    const head = await store.decisionHead();
    const report = await checkCheckpoints(
      store,
      head ?? { seq: 0, hash: "" },
      keys.jwks(),
      items.map((item) => ({ kind: "witness" as const, source: url, item })),
    );
    expect(report).toMatchObject({ problems: [], checked: { [url]: 3 }, newest: { seq: 3 } });
  });
});

describe("configuration", () => {
  it("accepts a witness file or an https URL, http only to loopback; resolves file paths", () => {
    const config = parseConfig(
      { decision_log: { witness: { file: "w.ndjson" }, checkpoints: { key_file: "k.json" } } },
      "/srv",
    );
    expect(config.decision_log.witness).toEqual({ file: "/srv/w.ndjson" });
    expect(config.decision_log.checkpoints).toMatchObject({
      enabled: true,
      interval_s: 60,
      key_file: "/srv/k.json",
    });
    expect(
      parseConfig({ decision_log: { witness: { url: "https://witness.example/c" } } }, "/srv").decision_log
        .witness,
    ).toMatchObject({ url: "https://witness.example/c" });
    expect(() =>
      parseConfig({ decision_log: { witness: { url: "http://witness.example/c" } } }, "/srv"),
    ).toThrow(/https/);
  });
});
