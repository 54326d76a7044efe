/**
 * The SQLite store's writer thread: a database file is written on a thread of its own (commits
 * and their syncs off the event loop), with the calls that queue up committed together, each
 * failing alone; reads see every acknowledged write at once.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DecisionLog } from "../../src/decisionlog/index.ts";
import { SqliteStore } from "../../src/store/index.ts";
import { expectWritError } from "./contract.ts";
import { newEntry, tempDir } from "./fixtures.ts";

const here = path.dirname(fileURLToPath(import.meta.url));

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

describe("the SQLite writer", () => {
  it("writes a file on the writer thread, an in-memory database or writer: inline on this one", async () => {
    const file = tmp.track(await SqliteStore.open(tmp.file("a.db")));
    const inline = tmp.track(await SqliteStore.open(tmp.file("b.db"), { writer: "inline" }));
    const memory = tmp.track(await SqliteStore.open(":memory:"));
    expect([file.writer, inline.writer, memory.writer]).toEqual(["thread", "inline", "inline"]);
    for (const store of [file, inline, memory]) {
      const entry = await store.appendDecision(newEntry());
      expect(await store.getDecision(entry.decision_id)).toEqual(entry);
    }
  });

  it("commits concurrent calls together, a failing call alone, and answers only committed ones", async () => {
    const store = tmp.track(await SqliteStore.open(tmp.file("group.db")));
    const first = await store.appendDecision(newEntry());
    const expires = new Date(Date.now() + 60_000);
    const calls = await Promise.allSettled([
      ...Array.from({ length: 30 }, () => store.appendDecision(newEntry())),
      store.appendDecision(newEntry({ decision_id: first.decision_id })),
      store.appendDecision(newEntry({ timestamp: "yesterday" })),
      store.consumeGrant({ jti: "g-1", maxUses: 1, expiresAt: expires }),
      store.consumeGrant({ jti: "g-1", maxUses: 1, expiresAt: expires }),
      store.putResource({ type: "repo", id: "r", owner: "alice", tenant: "acme", attributes: {} }),
    ]);
    const failed = calls.filter((c) => c.status === "rejected");
    expect(failed).toHaveLength(2);
    await expectWritError(store.appendDecision(newEntry({ decision_id: first.decision_id })), "conflict");
    const grants = calls.slice(32, 34).map((c) => (c.status === "fulfilled" ? c.value : c.reason));
    expect(grants).toEqual([
      { ok: true, uses: 1 },
      { ok: false, reason: "exhausted" },
    ]);

    // What was acknowledged is committed: another connection sees it, and the chain holds.
    const other = tmp.track(new Database(tmp.file("group.db"), { readonly: true }));
    expect(other.prepare("SELECT count(*) AS n FROM decisions").get()).toEqual({ n: 31 });
    expect(await new DecisionLog(store).verify()).toMatchObject({ ok: true, entries: 31 });
    expect(await store.getResource("repo", "r")).toMatchObject({ owner: "alice", revision: 1 });
  });

  it("reports a call on a closed store as such", async () => {
    const store = await SqliteStore.open(tmp.file("closed.db"));
    await store.close();
    const error = await expectWritError(store.appendDecision(newEntry()), "internal");
    expect(error.message).toMatch(/closed/);
  });

  it("lets the process end by itself when its writes are done", async () => {
    const file = tmp.file("child.db");
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ["--import", "tsx", path.join(here, "writer-child.ts"), file], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      child.on("close", (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
    expect(result, result.stderr).toMatchObject({ code: 0, stdout: "thread 20\n" });
    const db = tmp.track(new Database(file, { readonly: true }));
    expect(db.prepare("SELECT count(*) AS n FROM decisions").get()).toEqual({ n: 20 });
  });
});
