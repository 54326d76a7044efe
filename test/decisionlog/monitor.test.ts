/**
 * ChainMonitor: the chain's status without a full walk per look, and never a shown entry that
 * no longer matches its hash reported as trustworthy.
 */
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ChainMonitor, DecisionLog } from "../../src/decisionlog/index.ts";
import { SqliteStore } from "../../src/store/index.ts";
import { newEntry, tempDir } from "../store/fixtures.ts";

let tmp: ReturnType<typeof tempDir>;
let store: SqliteStore;
let log: DecisionLog;
let now = 0;

beforeEach(async () => {
  tmp = tempDir();
  store = tmp.track(await SqliteStore.open(tmp.file("writ.db")));
  log = new DecisionLog(store);
  await store.appendDecisions(Array.from({ length: 5 }, () => newEntry()));
  now = 1_000_000;
});
afterEach(async () => {
  await tmp.cleanup();
});

function tamper(seq: number): void {
  const db = new Database(tmp.file("writ.db"));
  try {
    db.prepare("UPDATE decisions SET entry = json_set(entry, '$.decision', 'deny') WHERE seq = ?").run(seq);
  } finally {
    db.close();
  }
}

const monitor = () => new ChainMonitor(log, { fullEveryMs: 60_000, clock: () => now });

describe("ChainMonitor", () => {
  it("walks the whole log first, then only what was appended since", async () => {
    const chain = monitor();
    expect((await chain.status()).result).toMatchObject({ ok: true, entries: 5 });
    await store.appendDecisions([newEntry(), newEntry()]);
    // An edit inside the verified prefix is not seen by the cheap look...
    tamper(2);
    const cheap = await chain.status();
    expect(cheap.result).toMatchObject({ ok: true, entries: 7 });
    expect(cheap.full_checked_at).toBe(new Date(1_000_000).toISOString());
    // ...but the next full walk finds it, and the break stays reported.
    now += 60_000;
    expect((await chain.status()).result).toMatchObject({ ok: false, first_broken: { seq: 2 } });
    now += 1;
    expect((await chain.status()).result).toMatchObject({ ok: false, first_broken: { seq: 2 } });
  });

  it("walks the whole log at once when an entry about to be shown no longer matches its hash", async () => {
    const chain = monitor();
    await chain.status();
    tamper(3);
    const [shown] = await store.readDecisions(3, 1);
    if (!shown) throw new Error("no entry 3");
    const status = await chain.checkEntries([shown]);
    expect(status.result).toMatchObject({ ok: false, first_broken: { seq: 3, reason: "hash_mismatch" } });
  });

  it("sees the verified head cut back and rewritten, which a full walk alone cannot", async () => {
    const chain = monitor();
    await chain.status();
    const db = new Database(tmp.file("writ.db"));
    try {
      db.prepare("DELETE FROM decisions WHERE seq = 5").run();
    } finally {
      db.close();
    }
    // A new entry 5 links to entry 4: the chain is consistent again, but not the one verified.
    await store.appendDecisions([newEntry()]);
    expect((await log.verify()).ok).toBe(true);
    expect((await chain.status()).result).toMatchObject({
      ok: false,
      first_broken: { seq: 5, reason: "hash_mismatch" },
    });
  });
});
