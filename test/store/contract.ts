/**
 * The `Store` contract: every implementation (SQLite, PostgreSQL) must pass these tests. A test
 * file registers them with a harness that opens stores on fresh databases.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { WritError } from "../../src/core/errors.ts";
import { DecisionLog, hashEntry } from "../../src/decisionlog/index.ts";
import {
  type DecisionFilter,
  type DecisionLogEntry,
  GENESIS_HASH,
  MAX_PAGE_SIZE,
  type Store,
  UnreadableEntryError,
} from "../../src/store/index.ts";
import { approvalCollectionContract } from "./contract-approval-collection.ts";
import { approvalContract, idempotencyContract } from "./contract-approvals.ts";
import { checkpointContract } from "./contract-checkpoints.ts";
import { concurrencyContract } from "./contract-concurrency.ts";
import { consoleSessionContract } from "./contract-console-sessions.ts";
import { groupLeaseContract } from "./contract-group-leases.ts";
import { historyContract } from "./contract-history.ts";
import { limitContract } from "./contract-limits.ts";
import { logShippingContract } from "./contract-log-shipping.ts";
import { policyRevisionContract } from "./contract-policy-revisions.ts";
import { tenancyContract } from "./contract-tenancy.ts";
import { newEntry } from "./fixtures.ts";

/** A store as the contract tests it (both implementations also prune expired grant uses). */
export interface ContractStore extends Store {
  pruneExpiredGrants(now?: Date): Promise<number>;
}

export interface StoreHarness {
  /** A migrated store on a fresh, empty database. */
  open(): Promise<ContractStore>;
  /** Another store, with its own connections, on the database of the last `open()`. */
  openSame(): Promise<ContractStore>;
  /** Edits decision `seq` behind Writ's back: its reasons become the string "nope". */
  corruptReasons(seq: number): Promise<void>;
  /** Rewrites the stored text of decision `seq` behind Writ's back, byte for byte. */
  rewriteEntry(seq: number, edit: (text: string) => string): Promise<void>;
  /** Closes every store opened since the last cleanup. */
  cleanup(): Promise<void>;
}

export async function expectWritError(promise: Promise<unknown>, category: string): Promise<WritError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WritError);
  if (!(error instanceof WritError)) throw new Error("unreachable");
  expect(error.category).toBe(category);
  expect(error.suggestedFix.length).toBeGreaterThan(10);
  return error;
}

/** Registers the contract tests for one implementation. */
export function storeContract(h: StoreHarness): void {
  afterEach(async () => {
    await h.cleanup();
  });

  describe("resources", () => {
    it("puts, gets and bumps the revision on every put", async () => {
      const store = await h.open();
      expect(await store.getResource("repo", "r1")).toBeUndefined();
      const first = await store.putResource({
        type: "repo",
        id: "r1",
        owner: "alice",
        tenant: "acme",
        attributes: { visibility: "private", tags: ["a"] },
      });
      expect(first).toMatchObject({ type: "repo", id: "r1", owner: "alice", tenant: "acme", revision: 1 });
      expect(first.attributes).toEqual({ visibility: "private", tags: ["a"] });
      const second = await store.putResource({
        type: "repo",
        id: "r1",
        owner: "bob",
        tenant: "acme",
        attributes: {},
      });
      expect(second.revision).toBe(2);
      expect(await store.getResource("repo", "r1")).toEqual(second);
    });

    it("answers every read with the last write committed before it, on another instance too, raced", async () => {
      const reader = await h.open();
      const writer = await h.openSame();
      const put = (owner: string) =>
        writer.putResource({ type: "repo", id: "raced", owner, tenant: "acme", attributes: { owner } });
      expect(await reader.getResource("repo", "raced")).toBeUndefined();
      // Reads run all along, side by side with the writes: the revision a read sees never goes back.
      let stop = false;
      let seen = 0;
      const reading = (async () => {
        while (!stop) {
          // SQLite reads answer within the turn: let the writes' answers in between reads.
          await nextTurn();
          const now = await reader.getResource("repo", "raced");
          const revision = now?.revision ?? 0;
          expect(revision).toBeGreaterThanOrEqual(seen);
          if (now !== undefined) expect(now.attributes).toEqual({ owner: now.owner });
          seen = revision;
        }
      })();
      for (let i = 1; i <= 25; i++) {
        const written = await put(`owner-${i}`);
        // A read that starts once the write is answered sees it (or a later one), never the one before.
        const read = await reader.getResource("repo", "raced");
        expect(read?.revision).toBeGreaterThanOrEqual(written.revision);
        expect(read?.owner).toBe(`owner-${i}`);
      }
      stop = true;
      await reading;
      const updated = await writer.updateResourceAttributes("repo", "raced", 25, { owner: "changed" });
      expect(updated?.revision).toBe(26);
      expect(await reader.getResource("repo", "raced")).toEqual(updated);
    });

    it("compare-and-swaps attribute updates on the revision", async () => {
      const store = await h.open();
      const put = await store.putResource({
        type: "doc",
        id: "d",
        owner: "a",
        tenant: "t",
        attributes: { v: 1 },
      });
      const updated = await store.updateResourceAttributes("doc", "d", put.revision, { v: 2 });
      expect(updated).toMatchObject({ revision: 2, attributes: { v: 2 }, owner: "a" });
      expect(await store.updateResourceAttributes("doc", "d", put.revision, { v: 3 })).toBeUndefined();
      expect(await store.getResource("doc", "d")).toEqual(updated);
      expect(await store.updateResourceAttributes("doc", "missing", 1, { v: 3 })).toBeUndefined();
    });

    it("rejects invalid resources with field errors", async () => {
      const store = await h.open();
      const error = await expectWritError(
        store.putResource({ type: "", id: "x", owner: "a", tenant: "t", attributes: {} }),
        "invalid_argument",
      );
      expect(error.fieldErrors[0]?.path).toBe("/resource/type");
      await expectWritError(
        store.putResource({ type: "t", id: "x", owner: "a", tenant: "t", attributes: { n: 1n } }),
        "invalid_argument",
      );
    });
  });

  describe("grant uses", () => {
    const later = new Date("2030-01-01T00:00:00Z");
    const now = new Date("2029-12-31T23:59:00Z");

    it("allows a single-use grant once", async () => {
      const store = await h.open();
      expect(await store.consumeGrant({ jti: "jti-1", maxUses: 1, expiresAt: later }, now)).toEqual({
        ok: true,
        uses: 1,
      });
      expect(await store.consumeGrant({ jti: "jti-1", maxUses: 1, expiresAt: later }, now)).toEqual({
        ok: false,
        reason: "exhausted",
      });
    });

    it("counts up to max_uses = 3", async () => {
      const store = await h.open();
      const results = [];
      for (let i = 0; i < 5; i++)
        results.push(await store.consumeGrant({ jti: "jti-3", maxUses: 3, expiresAt: later }, now));
      expect(results).toEqual([
        { ok: true, uses: 1 },
        { ok: true, uses: 2 },
        { ok: true, uses: 3 },
        { ok: false, reason: "exhausted" },
        { ok: false, reason: "exhausted" },
      ]);
    });

    it("refuses expired grants, before and after a first use, and prunes them", async () => {
      const store = await h.open();
      expect(await store.consumeGrant({ jti: "jti-e", maxUses: 1, expiresAt: later }, later)).toEqual({
        ok: false,
        reason: "expired",
      });
      expect(await store.consumeGrant({ jti: "jti-f", maxUses: 5, expiresAt: later }, now)).toEqual({
        ok: true,
        uses: 1,
      });
      expect(
        await store.consumeGrant(
          { jti: "jti-f", maxUses: 5, expiresAt: later },
          new Date(later.getTime() + 1),
        ),
      ).toEqual({
        ok: false,
        reason: "expired",
      });
      expect(await store.pruneExpiredGrants(later)).toBe(1);
      expect(await store.pruneExpiredGrants(later)).toBe(0);
    });

    it("counts a bound use only while the resource is at the grant's revision, atomically", async () => {
      const store = await h.open();
      const ws = { type: "workspace", id: "ws-bound", owner: "alice", tenant: "t1", attributes: {} };
      const first = await store.putResource(ws);
      const use = (jti: string, revision: number | null, maxUses = 2) => ({
        jti,
        maxUses,
        expiresAt: later,
        resource: { type: "workspace", id: "ws-bound", revision },
      });
      expect(await store.consumeGrant(use("b-1", first.revision), now)).toEqual({ ok: true, uses: 1 });
      // The workspace changes hands: the same grant, and another decided on the old revision, are stale.
      const moved = await store.putResource({ ...ws, owner: "mallory" });
      expect(await store.consumeGrant(use("b-1", first.revision), now)).toEqual({
        ok: false,
        reason: "stale_revision",
        revision: moved.revision,
      });
      expect(await store.consumeGrant(use("b-2", first.revision), now)).toEqual({
        ok: false,
        reason: "stale_revision",
        revision: moved.revision,
      });
      // Nothing was counted for them: a grant decided on the new revision is not affected.
      expect(await store.consumeGrant(use("b-3", moved.revision, 1), now)).toEqual({ ok: true, uses: 1 });
      // A use decided on the resource's absence: stale once it exists, counted while it does not.
      expect(
        await store.consumeGrant(
          { ...use("b-4", null), resource: { type: "workspace", id: "ws-bound", revision: null } },
          now,
        ),
      ).toEqual({
        ok: false,
        reason: "stale_revision",
        revision: moved.revision,
      });
      expect(
        await store.consumeGrant(
          { ...use("b-5", null), resource: { type: "workspace", id: "ws-none", revision: null } },
          now,
        ),
      ).toEqual({ ok: true, uses: 1 });
      expect(
        await store.consumeGrant(
          { ...use("b-6", 1), resource: { type: "workspace", id: "ws-none", revision: 1 } },
          now,
        ),
      ).toEqual({
        ok: false,
        reason: "stale_revision",
        revision: null,
      });
      // Used up and expired say so before the revision does.
      expect(await store.consumeGrant(use("b-3", moved.revision, 1), now)).toEqual({
        ok: false,
        reason: "exhausted",
      });
      expect(await store.consumeGrant(use("b-3", first.revision), later)).toEqual({
        ok: false,
        reason: "expired",
      });
    });

    it("rejects nonsense arguments", async () => {
      const store = await h.open();
      await expectWritError(
        store.consumeGrant({ jti: "j", maxUses: 0, expiresAt: later }, now),
        "invalid_argument",
      );
      await expectWritError(
        store.consumeGrant(
          { jti: "j", maxUses: 1, expiresAt: later, resource: { type: "", id: "x", revision: 1 } },
          now,
        ),
        "invalid_argument",
      );
      await expectWritError(
        store.consumeGrant(
          { jti: "j", maxUses: 1, expiresAt: later, resource: { type: "t", id: "x", revision: 1.5 } },
          now,
        ),
        "invalid_argument",
      );
      await expectWritError(
        store.consumeGrant({ jti: "j", maxUses: 1, expiresAt: new Date("nope") }, now),
        "invalid_argument",
      );
    });
  });

  describe("call cancellations", () => {
    it("reaches another store on the same database, with its reason, until it expires", async () => {
      const store = await h.open();
      const other = await h.openSame();
      const soon = new Date(Date.now() + 60_000);
      await store.requestCancellation('["t","alice",7]', "no longer needed", soon);
      await store.requestCancellation('["t","alice",8]', undefined, soon);
      await store.requestCancellation('["t","alice",9]', "too late", new Date(Date.now() - 1));
      const found = await other.requestedCancellations([
        '["t","alice",7]',
        '["t","alice",8]',
        '["t","alice",9]',
        "x",
      ]);
      expect([...found.entries()]).toEqual(
        expect.arrayContaining([
          ['["t","alice",7]', "no longer needed"],
          ['["t","alice",8]', undefined],
        ]),
      );
      expect(found.size).toBe(2);
      expect((await other.requestedCancellations([])).size).toBe(0);
    });
  });

  describe("decision log storage", () => {
    it("chains entries from the genesis hash", async () => {
      const store = await h.open();
      const a = await store.appendDecision(newEntry());
      const b = await store.appendDecision(newEntry({ decision: "deny" }));
      expect(a.seq).toBe(1);
      expect(a.prev_hash).toBe(GENESIS_HASH);
      expect(b.seq).toBe(2);
      expect(b.prev_hash).toBe(a.hash);
      expect(hashEntry(a)).toBe(a.hash);
      expect(await store.getDecision(b.decision_id)).toEqual(b);
      expect(await store.getDecision("nope")).toBeUndefined();
    });

    it("appends each entry on its own with appendEachDecision: a refused one fails alone", async () => {
      const store = await h.open();
      const first = await store.appendDecision(newEntry());
      const entries = [
        newEntry(),
        newEntry({ decision_id: first.decision_id }),
        newEntry({ timestamp: "yesterday" }),
        newEntry({ reasons: [{ code: "r", message: "m", visible_to_model: true }] }),
      ];
      const appended = await store.appendEachDecision(entries);
      const stored = await store.readDecisions(2, 10);
      expect(stored.map((e) => e.decision_id)).toEqual([entries[0]?.decision_id, entries[3]?.decision_id]);
      expect(appended.map((a) => (a.ok ? a.link : a.error.category))).toEqual([
        { seq: 2, prev_hash: first.hash, hash: stored[0]?.hash },
        "conflict",
        "invalid_argument",
        { seq: 3, prev_hash: stored[0]?.hash, hash: stored[1]?.hash },
      ]);
      expect(await store.getDecision(entries[3]?.decision_id ?? "")).toMatchObject({
        reasons: [{ code: "r" }],
      });
    });

    it("stores the JSON form it hashes (normalized timestamp, defaults filled, undefined dropped)", async () => {
      const store = await h.open();
      const entry = await store.appendDecision(
        newEntry({
          timestamp: "2025-01-01T02:00:00+02:00",
          result: undefined,
          input: { when: new Date("2025-01-01T00:00:00Z"), skip: undefined },
          conditions: [{ type: "redact_result", paths: [], classifications: [] }],
        }),
      );
      expect(entry.timestamp).toBe("2025-01-01T00:00:00.000Z");
      expect(entry.input).toEqual({ when: "2025-01-01T00:00:00.000Z" });
      const read = await store.getDecision(entry.decision_id);
      expect(read).toEqual(entry);
      if (read === undefined) throw new Error("unreachable");
      expect(hashEntry(read)).toBe(read.hash);
    });

    it("refuses a duplicate decision id and an invalid entry", async () => {
      const store = await h.open();
      const entry = newEntry();
      await store.appendDecision(entry);
      await expectWritError(store.appendDecision(entry), "conflict");
      const bad = await expectWritError(
        store.appendDecision(newEntry({ metrics: { t: Number.NaN } })),
        "invalid_argument",
      );
      expect(bad.fieldErrors[0]?.path).toBe("/entry/metrics/t");
      await expectWritError(store.appendDecision(newEntry({ timestamp: "yesterday" })), "invalid_argument");
      // Nothing half-written: the next append still gets seq 2.
      expect((await store.appendDecision(newEntry())).seq).toBe(2);
    });

    it("is durable: another store on the same database reads the entry right after the append resolves", async () => {
      const store = await h.open();
      const entry = await store.appendDecision(newEntry({ subject: "durable" }));
      const other = await h.openSame();
      expect(await other.getDecision(entry.decision_id)).toEqual(entry);
    });

    it("reports a row edited into the wrong shape as unreadable, with its seq", async () => {
      const store = await h.open();
      const entry = await store.appendDecision(newEntry());
      await h.corruptReasons(1);
      const error = await store.getDecision(entry.decision_id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnreadableEntryError);
      expect(error).toMatchObject({ seq: 1, decisionId: entry.decision_id, category: "internal" });
    });
  });

  describe("an entry's stored text (issue 27, item 2)", () => {
    /** Two entries of tenant acme; the first is then rewritten by `edit`. */
    async function tampered(edit: (text: string) => string) {
      const store = await h.open();
      const first = await store.appendDecision(newEntry({ tenant: "acme", decision: "deny" }));
      await store.appendDecision(newEntry({ tenant: "acme" }));
      await h.rewriteEntry(1, edit);
      return { store, first };
    }

    it("starting with a duplicate key is a broken log, and no list files it under another tenant", async () => {
      // What the red team did: the same value for JSON.parse (the last key wins), another tenant
      // and decision for SQLite's json_extract (the first key wins).
      const { store, first } = await tampered(
        (text) => `{"decision":"allow","tenant":"other",${text.slice(1)}`,
      );
      expect(await new DecisionLog(store).verify()).toEqual({
        ok: false,
        entries_checked: 0,
        first_broken: { seq: 1, decision_id: first.decision_id, reason: "unreadable" },
      });
      const listed = await store.queryDecisionsIn({ tenant: "other" }, {}, 50).then(
        (page) => page.entries,
        (error: unknown) => error,
      );
      // Refused as unreadable, or not found: never shown to tenant "other".
      if (Array.isArray(listed)) expect(listed).toEqual([]);
      else expect(listed).toBeInstanceOf(UnreadableEntryError);
      const allowed = await store.queryDecisions({ decision: "allow" }, 50).then(
        (page) => page.entries.map((e) => e.seq),
        (error: unknown) => error,
      );
      if (Array.isArray(allowed)) expect(allowed).toEqual([2]);
      else expect(allowed).toBeInstanceOf(UnreadableEntryError);
      await expect(store.getDecision(first.decision_id)).rejects.toBeInstanceOf(UnreadableEntryError);
    });

    it.each([
      [
        "a key moved",
        (text: string) =>
          text.replace(/^\{("action":"[^"]*"),/, "{").replace(/\}$/, ',"action":"repo_read"}'),
      ],
      ["a space added", (text: string) => text.replace('"tenant":"acme"', '"tenant": "acme"')],
      ["a letter escaped", (text: string) => text.replace('"tenant":"acme"', '"tenant":"\\u0061cme"')],
      ["a number respelled", (text: string) => text.replace('"timer_eval_ns":1200', '"timer_eval_ns":1.2e3')],
    ])("respelled (%s) but parsing to the same value is a broken log", async (_, edit) => {
      const { store, first } = await tampered(edit);
      const rows = await store.queryDecisions({}, 50).catch((e: unknown) => e);
      expect(rows).toBeInstanceOf(UnreadableEntryError);
      expect(await new DecisionLog(store).verify()).toMatchObject({
        ok: false,
        first_broken: { seq: 1, decision_id: first.decision_id, reason: "unreadable" },
      });
    });
  });

  describe("queryDecisions", () => {
    const base = Date.parse("2025-03-01T00:00:00Z");
    const at = (minutes: number) => new Date(base + minutes * 60_000).toISOString();

    async function seeded() {
      const store = await h.open();
      const specs = [
        {
          subject: "alice",
          tenant: "acme",
          action: "repo_read",
          decision: "allow",
          codes: [],
          type: "repo",
          id: "r1",
        },
        {
          subject: "bob",
          tenant: "acme",
          action: "repo_write",
          decision: "deny",
          codes: ["not_owner"],
          type: "repo",
          id: "r1",
        },
        {
          subject: "alice",
          tenant: "beta",
          action: "repo_write",
          decision: "require_approval",
          codes: ["needs_review", "big_change"],
          type: "repo",
          id: "r2",
        },
        {
          subject: "carol",
          tenant: "beta",
          action: "pay",
          decision: "allow_with_conditions",
          codes: ["capped"],
          type: "account",
          id: "a1",
        },
        {
          subject: null,
          tenant: null,
          action: null,
          decision: "error",
          codes: ["unknown_tool"],
          type: null,
          id: null,
        },
      ] as const;
      const entries: DecisionLogEntry[] = [];
      for (const [i, s] of specs.entries()) {
        entries.push(
          await store.appendDecision(
            newEntry({
              timestamp: at(i * 10),
              subject: s.subject,
              tenant: s.tenant,
              action: s.action,
              decision: s.decision,
              reasons: s.codes.map((code) => ({ code, message: code, visible_to_model: true })),
              resource: s.type === null || s.id === null ? null : { type: s.type, id: s.id },
              // One entry of another policy path (a shadow policy's disagreement).
              ...(s.action === "pay" ? { path: "writ/shadow" } : {}),
            }),
          ),
        );
      }
      return { store, entries };
    }

    it("filters on each field, newest first", async () => {
      const { store } = await seeded();
      const seqs = async (filter: Parameters<typeof store.queryDecisions>[0]) =>
        (await store.queryDecisions(filter, 100)).entries.map((e) => e.seq);
      expect(await seqs({})).toEqual([5, 4, 3, 2, 1]);
      expect(await seqs({ subject: "alice" })).toEqual([3, 1]);
      expect(await seqs({ tenant: "beta" })).toEqual([4, 3]);
      expect(await seqs({ action: "repo_write" })).toEqual([3, 2]);
      expect(await seqs({ decision: "deny" })).toEqual([2]);
      expect(await seqs({ decision: "error" })).toEqual([5]);
      expect(await seqs({ reason: "big_change" })).toEqual([3]);
      expect(await seqs({ reason: "needs_review" })).toEqual([3]);
      expect(await seqs({ reason: "absent" })).toEqual([]);
      expect(await seqs({ resourceType: "repo" })).toEqual([3, 2, 1]);
      expect(await seqs({ resourceType: "repo", resourceId: "r1" })).toEqual([2, 1]);
      expect(await seqs({ resourceId: "a1" })).toEqual([4]);
      expect(await seqs({ path: "writ/shadow" })).toEqual([4]);
      expect(await seqs({ path: "writ/absent" })).toEqual([]);
      expect(await seqs({ since: at(10) })).toEqual([5, 4, 3, 2]);
      expect(await seqs({ until: at(10) })).toEqual([1]);
      expect(await seqs({ since: at(10), until: at(30) })).toEqual([3, 2]);
      // Offsets and plain dates are normalized before comparing.
      expect(await seqs({ since: "2025-03-01T02:10:00+02:00" })).toEqual([5, 4, 3, 2]);
      expect(await seqs({ until: "2025-03-01" })).toEqual([]);
      expect(await seqs({ subject: "alice", tenant: "acme", decision: "allow" })).toEqual([1]);
    });

    it("filters on a Code Mode run: its own entry and its calls' entries, decided or refused", async () => {
      const store = await h.open();
      const run = { id: "run-1", decision_id: "d-run" };
      const inside = { context: { phase: "call", run } };
      await store.appendDecision(newEntry({ decision_id: "d-run", input: inside, action: "code.run" }));
      await store.appendDecision(newEntry({ input: inside }));
      await store.appendDecision(newEntry({ input: { context: { run: { ...run, id: "run-2" } } } }));
      await store.appendDecision(newEntry({ input: { tool: "nope", run }, decision: "error" }));
      await store.appendDecision(newEntry());
      const seqs = async (id: string) =>
        (await store.queryDecisions({ run: id }, 100)).entries.map((e) => e.seq);
      expect(await seqs("run-1")).toEqual([4, 2, 1]);
      expect(await seqs("run-2")).toEqual([3]);
      expect(await seqs("absent")).toEqual([]);
      const scoped = await store.queryDecisionsIn({ tenant: "acme" }, { run: "run-1" }, 100);
      expect(scoped.entries.map((e) => e.seq)).toEqual([4, 2, 1]);
      expect((await store.queryDecisionsIn({ tenant: "other" }, { run: "run-1" }, 100)).entries).toEqual([]);
    });

    it("rejects invalid filters and limits with field errors", async () => {
      const { store } = await seeded();
      const since = await expectWritError(
        store.queryDecisions({ since: "yesterday" }, 10),
        "invalid_argument",
      );
      expect(since.fieldErrors[0]?.path).toBe("/filter/since");
      const extra: DecisionFilter = JSON.parse('{"subjekt": "alice"}');
      await expectWritError(store.queryDecisions(extra, 10), "invalid_argument");
      await expectWritError(store.queryDecisions({}, 0), "invalid_argument");
      await expectWritError(store.queryDecisions({}, 1.5), "invalid_argument");
      await expectWritError(store.readDecisions(0, 10), "invalid_argument");
    });

    it("pages through 120 entries 50 at a time without gaps or duplicates", async () => {
      const store = await h.open();
      for (let i = 0; i < 120; i++) await store.appendDecision(newEntry({ timestamp: at(i) }));
      const pages: number[][] = [];
      let cursor: string | undefined;
      do {
        const page = await store.queryDecisions({}, 50, cursor);
        pages.push(page.entries.map((e) => e.seq));
        cursor = page.next_cursor;
      } while (cursor !== undefined);
      expect(pages.map((p) => p.length)).toEqual([50, 50, 20]);
      expect(pages.flat()).toEqual(Array.from({ length: 120 }, (_, i) => 120 - i));
    });

    it("pages a filtered query and ends without a cursor when the last page is exactly full", async () => {
      const store = await h.open();
      for (let i = 0; i < 40; i++) {
        await store.appendDecision(newEntry({ subject: i % 2 === 0 ? "even" : "odd", timestamp: at(i) }));
      }
      const first = await store.queryDecisions({ subject: "even" }, 10);
      expect(first.entries.map((e) => e.seq)).toEqual([39, 37, 35, 33, 31, 29, 27, 25, 23, 21]);
      const second = await store.queryDecisions({ subject: "even" }, 10, first.next_cursor);
      expect(second.entries.map((e) => e.seq)).toEqual([19, 17, 15, 13, 11, 9, 7, 5, 3, 1]);
      expect(second.next_cursor).toBeUndefined();
    });

    it("caps the page size at 500", async () => {
      const store = await h.open();
      for (let i = 0; i < MAX_PAGE_SIZE + 5; i++) await store.appendDecision(newEntry());
      const page = await store.queryDecisions({}, 10_000);
      expect(page.entries).toHaveLength(MAX_PAGE_SIZE);
      expect(page.next_cursor).toBeDefined();
    });

    it("rejects a cursor it did not hand out", async () => {
      const { store } = await seeded();
      const good = (await store.queryDecisions({}, 2)).next_cursor;
      expect(good).toBeDefined();
      const bads = [
        "",
        "not a cursor!",
        Buffer.from("abc").toString("base64url"),
        Buffer.from("0").toString("base64url"),
        Buffer.from("-3").toString("base64url"),
        Buffer.from("3").toString("base64"),
        `${good}=`,
      ];
      for (const cursor of bads) {
        const error = await expectWritError(store.queryDecisions({}, 2, cursor), "invalid_argument");
        expect(error.fieldErrors[0]?.path).toBe("/cursor");
        expect(error.suggestedFix).toMatch(/next_cursor/);
      }
    });
  });

  approvalContract(h);
  approvalCollectionContract(h);
  idempotencyContract(h);
  concurrencyContract(h);
  checkpointContract(h);
  tenancyContract(h);
  consoleSessionContract(h);
  logShippingContract(h);
  limitContract(h);
  policyRevisionContract(h);
  groupLeaseContract(h);
  historyContract(h);
}
