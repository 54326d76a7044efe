import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { hashEntry } from "../../src/decisionlog/index.ts";
import { GENESIS_HASH, SqliteStore } from "../../src/store/index.ts";
import { sqliteMigrations } from "../../src/store/migrations.ts";
import { expectWritError, storeContract } from "./contract.ts";
import { newEntry, tempDir } from "./fixtures.ts";

const here = path.dirname(fileURLToPath(import.meta.url));

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

async function openStore(name = "writ.db", options: ConstructorParameters<typeof SqliteStore>[1] = {}) {
  return tmp.track(await SqliteStore.open(tmp.file(name), options));
}

function raw(file = tmp.file()): Database.Database {
  return tmp.track(new Database(file));
}

describe("migrations", () => {
  it("creates the schema once, however often migrate runs", async () => {
    const store = await openStore("nested/dir/writ.db");
    await store.migrate();
    await store.migrate();
    const db = raw(tmp.file("nested/dir/writ.db"));
    const versions = db.prepare("SELECT version FROM schema_migrations ORDER BY version").all();
    expect(versions).toEqual(sqliteMigrations.map((m) => ({ version: m.version })));
    const tables = z
      .array(z.object({ name: z.string() }))
      .parse(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all())
      .map((row) => row.name);
    expect(tables).toEqual(
      expect.arrayContaining([
        "decision_reasons",
        "decisions",
        "grant_uses",
        "resources",
        "schema_migrations",
      ]),
    );
  });

  it("uses WAL with synchronous FULL by default, NORMAL on request", async () => {
    const full = await openStore("full.db");
    expect(full).toMatchObject({ location: tmp.file("full.db"), journalMode: "wal", synchronous: 2 });
    expect(raw(tmp.file("full.db")).pragma("journal_mode", { simple: true })).toBe("wal");
    const normal = await openStore("normal.db", { synchronous: "normal" });
    expect(normal).toMatchObject({ journalMode: "wal", synchronous: 1 });
  });

  it("lets two store instances share one file", async () => {
    const a = await openStore();
    const b = await openStore();
    await a.putResource({ type: "repo", id: "r1", owner: "alice", tenant: "acme", attributes: {} });
    expect((await b.getResource("repo", "r1"))?.owner).toBe("alice");
    await b.appendDecision(newEntry());
    const second = await a.appendDecision(newEntry());
    expect(second.seq).toBe(2);
  });

  it("is safe when several processes open, migrate and append to a new file at once", async () => {
    const file = tmp.file("race.db");
    const startAt = Date.now() + 1500;
    const children = ["p1", "p2", "p3", "p4"].map(
      (name) =>
        new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = spawn(
            process.execPath,
            ["--import", "tsx", path.join(here, "concurrent-child.ts"), file, String(startAt), "25", name],
            { stdio: ["ignore", "ignore", "pipe"] },
          );
          let stderr = "";
          child.stderr.on("data", (chunk: Buffer) => {
            stderr += chunk.toString();
          });
          child.on("close", (code) => resolve({ code, stderr }));
        }),
    );
    const results = await Promise.all(children);
    for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 });
    const store = await openStore("race.db");
    const versions = raw(file).prepare("SELECT version FROM schema_migrations").all();
    expect(versions).toHaveLength(sqliteMigrations.length);
    const entries = await store.readDecisions(1, 1000);
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    let prev = GENESIS_HASH;
    for (const entry of entries) {
      expect(entry.prev_hash).toBe(prev);
      expect(hashEntry(entry)).toBe(entry.hash);
      prev = entry.hash;
    }
  }, 60_000);

  it("refuses a file written by a newer schema", async () => {
    const store = await openStore();
    raw()
      .prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 'x')")
      .run();
    const error = await expectWritError(store.migrate(), "internal");
    expect(error.message).toMatch(/schema version 999/);
  });

  it("says to migrate when the schema is missing, and refuses to work once closed", async () => {
    const store = tmp.track(new SqliteStore(tmp.file("bare.db")));
    const error = await expectWritError(store.getResource("repo", "x"), "internal");
    expect(error.suggestedFix).toMatch(/migrate/);
    await store.migrate();
    expect(await store.getResource("repo", "x")).toBeUndefined();
    await store.close();
    await expectWritError(store.getResource("repo", "x"), "internal");
  });

  it("works in memory", async () => {
    const store = tmp.track(await SqliteStore.open(":memory:"));
    expect((await store.appendDecision(newEntry())).seq).toBe(1);
  });
});

describe("SQLite-only durability", () => {
  it("is durable: another connection reads the entry right after the append resolves", async () => {
    const store = await openStore();
    const entry = await store.appendDecision(newEntry({ subject: "durable" }));
    const reader = new Database(tmp.file(), { readonly: true });
    const row = reader
      .prepare("SELECT seq, entry, hash FROM decisions WHERE decision_id = ?")
      .get(entry.decision_id);
    reader.close();
    expect(row).toMatchObject({ seq: 1, hash: entry.hash });
    const other = await openStore();
    expect(await other.getDecision(entry.decision_id)).toEqual(entry);
  });
});

describe("resources", () => {
  // What any cache of resources must keep (issue 32 measured one and did not keep it).
  it("answers a change another connection made outside Writ (plain SQL) at once", async () => {
    const store = await openStore();
    expect(await store.getResource("repo", "r1")).toBeUndefined();
    const outside = raw();
    outside
      .prepare(
        `INSERT INTO resources (type, id, owner, tenant, revision, attributes, updated_at)
         VALUES ('repo', 'r1', 'alice', 'acme', 1, '{"team":"a"}', '2026-01-01T00:00:00.000Z')`,
      )
      .run();
    expect(await store.getResource("repo", "r1")).toMatchObject({ owner: "alice", revision: 1 });
    outside.prepare("UPDATE resources SET owner = 'mallory', revision = 2 WHERE id = 'r1'").run();
    expect(await store.getResource("repo", "r1")).toMatchObject({ owner: "mallory", revision: 2 });
    outside.prepare("DELETE FROM resources WHERE id = 'r1'").run();
    expect(await store.getResource("repo", "r1")).toBeUndefined();
  });
});

describe("the Store contract on SQLite", () => {
  let last = "";
  storeContract({
    async open() {
      last = tmp.file(`contract-${randomUUID()}.db`);
      return tmp.track(await SqliteStore.open(last, { synchronous: "normal" }));
    },
    async openSame() {
      return tmp.track(await SqliteStore.open(last, { synchronous: "normal" }));
    },
    async corruptReasons(seq) {
      raw(last)
        .prepare("UPDATE decisions SET entry = json_set(entry, '$.reasons', 'nope') WHERE seq = ?")
        .run(seq);
    },
    async rewriteEntry(seq, edit) {
      const db = raw(last);
      const { entry } = z
        .object({ entry: z.string() })
        .parse(db.prepare("SELECT entry FROM decisions WHERE seq = ?").get(seq));
      db.prepare("UPDATE decisions SET entry = ? WHERE seq = ?").run(edit(entry), seq);
    },
    async cleanup() {},
  });
});
