import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { WritError } from "../../src/core/errors.ts";
import { DecisionLog, type DecisionParts, hashEntry, MASK } from "../../src/decisionlog/index.ts";
import { decisionLogEntrySchema, GENESIS_HASH, SqliteStore } from "../../src/store/index.ts";
import { tempDir } from "../store/fixtures.ts";

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

const start = Date.parse("2025-06-01T12:00:00Z");

/** A log over a fresh file, with a clock that ticks one second per entry. */
async function openLog(options: { synchronous?: "full" | "normal" } = {}) {
  const store = tmp.track(await SqliteStore.open(tmp.file(), options));
  let tick = 0;
  const log = new DecisionLog(store, { now: () => new Date(start + 1000 * tick++) });
  return { store, log };
}

function parts(overrides: Partial<DecisionParts> = {}): DecisionParts {
  return {
    path: "writ/decision",
    input: {
      subject: { id: "alice" },
      action: { name: "repo_read", data_classification: "internal", args: { p: 1 } },
    },
    result: { decision: "allow", reasons: [], conditions: [] },
    policy_revision: "bundle-7",
    subject: "alice",
    tenant: "acme",
    action: "repo_read",
    resource: { type: "repo", id: "acme/site" },
    decision: "allow",
    request_id: "req-1",
    ...overrides,
  };
}

async function fill(log: DecisionLog, count: number) {
  for (let i = 0; i < count; i++) {
    await log.append(parts({ subject: `user-${i % 3}`, decision: i % 2 === 0 ? "allow" : "deny" }));
  }
}

function raw(): Database.Database {
  return tmp.track(new Database(tmp.file()));
}

describe("append", () => {
  it("builds, redacts and chains entries", async () => {
    const { log } = await openLog();
    const input = {
      subject: { id: "alice" },
      action: { name: "vault_put", data_classification: "secret", args: { value: "s3cr3t" } },
      context: { headers: { authorization: "Basic dXNlcjpwYXNz" } },
    };
    const firstLogged = await log.append(
      parts({
        input,
        grant_jti: "jti-1",
        metrics: { timer_eval_ns: 5 },
        reasons: [{ code: "ok", message: "fine", visible_to_model: true }],
      }),
    );
    const first = await log.get(firstLogged.decision_id);
    if (first === undefined) throw new Error("the first entry is not in the log");
    expect(firstLogged).toEqual({
      decision_id: first.decision_id,
      seq: first.seq,
      prev_hash: first.prev_hash,
      hash: first.hash,
    });
    // A version 7 UUID: time-ordered, so its row goes at the end of the decision id's index.
    expect(first.decision_id).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(first).toMatchObject({
      seq: 1,
      timestamp: "2025-06-01T12:00:00.000Z",
      bundles: { writ: { revision: "bundle-7" } },
      erased: ["/action/args"],
      masked: ["/context/headers/authorization"],
      input: {
        subject: { id: "alice" },
        action: { name: "vault_put", data_classification: "secret" },
        context: { headers: { authorization: MASK } },
      },
      grant_jti: "jti-1",
      approval_id: null,
      error: null,
      conditions: [],
      prev_hash: GENESIS_HASH,
    });
    expect(input.action.args.value).toBe("s3cr3t");
    await log.append(
      parts({ decision_id: "chosen-id", result: undefined, decision: "error", error: "internal" }),
    );
    const second = await log.get("chosen-id");
    expect(second).toMatchObject({
      seq: 2,
      decision_id: "chosen-id",
      prev_hash: first.hash,
      timestamp: "2025-06-01T12:00:01.000Z",
    });
    expect(second?.result).toBeUndefined();
  });

  it("keeps going after a failed append", async () => {
    const { log } = await openLog();
    await log.append(parts({ decision_id: "dup" }));
    const failed = log.append(parts({ decision_id: "dup" }));
    const next = log.append(parts());
    await expect(failed).rejects.toMatchObject({ category: "conflict" });
    expect((await next).seq).toBe(2);
    await expect(log.append(parts({ input: { n: 1n } }))).rejects.toBeInstanceOf(WritError);
    await log.drain();
    expect(log.pending).toBe(0);
  });

  it("lands 500 concurrent appends, in call order, with a valid chain", async () => {
    const { log } = await openLog();
    const results = await Promise.all(
      Array.from({ length: 500 }, (_, i) => log.append(parts({ request_id: `req-${i}` }))),
    );
    expect(results.map((e) => e.seq)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    const entries = await Promise.all(results.map((e) => log.get(e.decision_id)));
    expect(entries.map((e) => e?.request_id)).toEqual(Array.from({ length: 500 }, (_, i) => `req-${i}`));
    expect(log.pending).toBe(0);
    const verified = await log.verify({ batch: 128 });
    expect(verified).toEqual({ ok: true, entries: 500, head_hash: results[499]?.hash });
  });

  it("sends the appends of one turn in parts while the store has room, so it starts before the turn ends", async () => {
    const store = tmp.track(await SqliteStore.open(tmp.file()));
    // The real store, watched: how many entries each write it is asked for carries.
    const sent: number[] = [];
    const watched = new Proxy(store, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target);
        if (key === "appendEachDecision" && typeof value === "function") {
          return (entries: unknown[], ...rest: unknown[]) => {
            sent.push(entries.length);
            return Reflect.apply(value, target, [entries, ...rest]);
          };
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const log = new DecisionLog(watched);
    const appends = Array.from({ length: 40 }, (_, i) => log.append(parts({ request_id: `req-${i}` })));
    // Within the turn the 40 were appended in, some parts were already on their way.
    const sentInTurn = [...sent];
    const results = await Promise.all(appends);
    expect(sentInTurn.length).toBeGreaterThan(1);
    expect(Math.max(...sentInTurn)).toBeLessThan(40);
    expect(sent.reduce((a, b) => a + b, 0)).toBe(40);
    expect(results.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(await log.verify()).toMatchObject({ ok: true, entries: 40 });
  });
});

describe("query", () => {
  it("filters and pages through the store", async () => {
    const { log } = await openLog({ synchronous: "normal" });
    await fill(log, 12);
    const page = await log.query({ decision: "deny" }, 4);
    expect(page.entries.map((e) => e.seq)).toEqual([12, 10, 8, 6]);
    const rest = await log.query({ decision: "deny" }, 4, page.next_cursor);
    expect(rest.entries.map((e) => e.seq)).toEqual([4, 2]);
    expect(rest.next_cursor).toBeUndefined();
    expect((await log.query()).entries).toHaveLength(12);
  });
});

describe("verify", () => {
  it("accepts an empty log and an intact one, whatever the batch size", async () => {
    const { log } = await openLog({ synchronous: "normal" });
    expect(await log.verify()).toEqual({ ok: true, entries: 0, head_hash: GENESIS_HASH });
    await fill(log, 10);
    for (const batch of [1, 3, 10, 1000])
      expect(await log.verify({ batch })).toMatchObject({ ok: true, entries: 10 });
    await expect(log.verify({ batch: 0 })).rejects.toMatchObject({ category: "invalid_argument" });
  });

  const tampering: [
    string,
    (db: Database.Database) => void,
    { seq: number; reason: string; checked: number },
  ][] = [
    [
      "an edited entry",
      (db) =>
        db.prepare("UPDATE decisions SET entry = json_set(entry, '$.decision', 'allow') WHERE seq = 4").run(),
      { seq: 4, reason: "hash_mismatch", checked: 3 },
    ],
    [
      "an edited entry whose hash was recomputed",
      (db) => {
        const row = z
          .object({ entry: z.string(), prev_hash: z.string(), hash: z.string() })
          .parse(db.prepare("SELECT entry, prev_hash, hash FROM decisions WHERE seq = 4").get());
        const stored = decisionLogEntrySchema.parse({
          ...JSON.parse(row.entry),
          seq: 4,
          prev_hash: row.prev_hash,
          hash: row.hash,
        });
        const edited = { ...stored, decision: "allow" as const };
        db.prepare(
          "UPDATE decisions SET entry = json_set(entry, '$.decision', 'allow'), hash = ? WHERE seq = 4",
        ).run(hashEntry(edited));
      },
      { seq: 5, reason: "broken_link", checked: 4 },
    ],
    [
      "a deleted entry",
      (db) => db.prepare("DELETE FROM decisions WHERE seq = 4").run(),
      { seq: 4, reason: "missing_entries", checked: 3 },
    ],
    [
      "a deleted first entry",
      (db) => db.prepare("DELETE FROM decisions WHERE seq = 1").run(),
      { seq: 1, reason: "missing_entries", checked: 0 },
    ],
    [
      "a deletion with the later entries renumbered",
      (db) => {
        db.prepare("DELETE FROM decisions WHERE seq = 4").run();
        for (let seq = 5; seq <= 10; seq++)
          db.prepare("UPDATE decisions SET seq = seq - 1 WHERE seq = ?").run(seq);
      },
      { seq: 4, reason: "broken_link", checked: 3 },
    ],
    [
      "two swapped entries",
      (db) => {
        db.prepare("UPDATE decisions SET seq = -1 WHERE seq = 4").run();
        db.prepare("UPDATE decisions SET seq = 4 WHERE seq = 5").run();
        db.prepare("UPDATE decisions SET seq = 5 WHERE seq = -1").run();
      },
      { seq: 4, reason: "broken_link", checked: 3 },
    ],
    [
      "an entry edited into the wrong shape",
      (db) =>
        db.prepare("UPDATE decisions SET entry = json_set(entry, '$.reasons', 'nope') WHERE seq = 4").run(),
      { seq: 4, reason: "unreadable", checked: 3 },
    ],
  ];

  for (const batch of [1, 3, 1000]) {
    it.each(tampering)(`detects %s (batch ${batch})`, async (_name, tamper, want) => {
      const { log } = await openLog({ synchronous: "normal" });
      await fill(log, 10);
      const ids = (await log.query({}, 100)).entries.reverse().map((e) => e.decision_id);
      tamper(raw());
      const result = await log.verify({ batch });
      expect(result).toEqual({
        ok: false,
        entries_checked: want.checked,
        first_broken: {
          seq: want.seq,
          reason: want.reason,
          decision_id: want.reason === "missing_entries" ? null : expect.any(String),
        },
      });
      if (want.reason === "hash_mismatch" || want.reason === "unreadable") {
        expect(result.ok ? undefined : result.first_broken.decision_id).toBe(ids[want.seq - 1]);
      }
    });
  }
});

describe("exportNdjson", () => {
  it("writes every entry oldest first, one verifiable JSON line each", async () => {
    const { log } = await openLog({ synchronous: "normal" });
    await fill(log, 7);
    const lines: string[] = [];
    for await (const line of log.exportNdjson()) lines.push(line);
    expect(lines).toHaveLength(7);
    let prev = GENESIS_HASH;
    for (const [i, line] of lines.entries()) {
      expect(line.endsWith("\n")).toBe(true);
      const entry = decisionLogEntrySchema.parse(JSON.parse(line));
      expect(entry.seq).toBe(i + 1);
      expect(entry.prev_hash).toBe(prev);
      expect(hashEntry(entry)).toBe(entry.hash);
      prev = entry.hash;
    }
  });

  it("exports what the same filter queries, in the opposite order", async () => {
    const { log } = await openLog({ synchronous: "normal" });
    await fill(log, 30);
    const filter = { subject: "user-1", decision: "deny" as const, since: "2025-06-01T12:00:05Z" };
    const exported: number[] = [];
    for await (const line of log.exportNdjson(filter))
      exported.push(decisionLogEntrySchema.parse(JSON.parse(line)).seq);
    const queried = (await log.query(filter, 500)).entries.map((e) => e.seq);
    expect(exported.length).toBeGreaterThan(0);
    expect(exported).toEqual([...queried].reverse());
    expect(() => log.exportNdjson({ until: "soon" })).toThrow(WritError);
  });
});
