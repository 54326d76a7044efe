/**
 * The `Store` contract, continued: two stores on one database (two instances' worth of
 * connections) racing for the same rows.
 */
import { describe, expect, it } from "vitest";
import { hashEntry } from "../../src/decisionlog/index.ts";
import { GENESIS_HASH } from "../../src/store/index.ts";
import type { StoreHarness } from "./contract.ts";
import { newApproval } from "./contract-approvals.ts";
import { newEntry } from "./fixtures.ts";

export function concurrencyContract(h: StoreHarness): void {
  describe("two stores racing on one database", () => {
    const now = new Date("2030-01-01T00:00:00Z");
    const later = new Date("2030-01-01T01:00:00Z");

    it("lets exactly one of 100 concurrent attempts use, decide or claim", async () => {
      const a = await h.open();
      const b = await h.openSame();
      const approval = await a.createApproval(newApproval());
      const attempts = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b));
      const uses = await Promise.all(
        attempts.map((s) => s.consumeGrant({ jti: "jti-race", maxUses: 1, expiresAt: later }, now)),
      );
      expect(uses.filter((u) => u.ok)).toHaveLength(1);
      const decisions = await Promise.all(
        attempts.map((s, i) =>
          s.decideApproval(
            approval.id,
            "pending",
            {
              status: "approved",
              resolution: "approved",
              decided_by: `approver-${i}`,
              decided_at: now.toISOString(),
              reason: null,
              reasons: [],
            },
            new Date("2030-01-01T00:00:01Z"),
          ),
        ),
      );
      expect(decisions.filter((d) => d !== undefined)).toHaveLength(1);
      const claims = await Promise.all(
        attempts.map((s) => s.claimIdempotency("alice", "k", "d", later, now)),
      );
      expect(claims.filter((c) => c.state === "claimed")).toHaveLength(1);
    });

    it("opens exactly one request for one call, of 40 racing from both (issue 27)", async () => {
      const a = await h.open();
      const b = await h.openSame();
      const at = new Date("2030-01-01T00:10:00Z");
      const openings = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).openOrCreateApproval(newApproval(), at)),
      );
      expect(openings.filter((o) => o.created)).toHaveLength(1);
      expect(new Set(openings.map((o) => o.record.id)).size).toBe(1);
      // Another call (another digest) opens its own; once expired, the call opens a new one.
      const other = await a.openOrCreateApproval(
        newApproval({ action: { ...newApproval().action, args_digest: "b".repeat(64) } }),
        at,
      );
      expect(other.created).toBe(true);
      const expired = await b.openOrCreateApproval(newApproval(), new Date("2030-01-01T02:00:00Z"));
      expect(expired.created).toBe(true);
    });

    it("chains concurrent appends from both into one gapless log", async () => {
      const a = await h.open();
      const b = await h.openSame();
      await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          i % 3 === 0
            ? (i % 2 === 0 ? a : b).appendDecisions([newEntry(), newEntry()])
            : (i % 2 === 0 ? a : b).appendDecision(newEntry()),
        ),
      );
      const entries = await a.readDecisions(1, 1000);
      expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
      let prev = GENESIS_HASH;
      for (const entry of entries) {
        expect(entry.prev_hash).toBe(prev);
        expect(hashEntry(entry)).toBe(entry.hash);
        prev = entry.hash;
      }
    });
  });
}
