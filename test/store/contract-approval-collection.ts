/**
 * The `Store` contract, continued: an approved request releases at most one grant, collected by
 * its requester before the request expires; the same call finds its open request.
 */
import { describe, expect, it } from "vitest";
import type { ApprovalGrant, ApprovalUpdate, Store } from "../../src/store/index.ts";
import type { StoreHarness } from "./contract.ts";
import { newApproval } from "./contract-approvals.ts";

const decidedAt = new Date("2030-01-01T00:10:00Z");
/** Before the request's expiry (01:00), fifty minutes after it was approved. */
const late = new Date("2030-01-01T00:59:00Z");
const expired = new Date("2030-01-01T01:00:00Z");

const approved: ApprovalUpdate = {
  status: "approved",
  resolution: "approved",
  decided_by: "bob",
  decided_at: decidedAt.toISOString(),
  reason: null,
  reasons: [],
  release: {
    decision_id: "d-approve",
    policy_revision: "rev-1",
    resource_revision: "3",
    decision: { decision: "allow", reasons: [], conditions: [{ type: "max_uses", uses: 1 }] },
  },
};

function grant(jti: string): ApprovalGrant {
  return { token: `t-${jti}`, jti, audience: "writ", expires_at: "2030-01-01T01:00:00.000Z", max_uses: 1 };
}

async function approvedRequest(store: Store) {
  const request = await store.createApproval(newApproval());
  const decided = await store.decideApproval(request.id, "pending", approved, decidedAt);
  if (!decided) throw new Error("not approved");
  return decided;
}

export function approvalCollectionContract(h: StoreHarness): void {
  describe("approval grants and open requests", () => {
    it("keeps the approving decision, and records one collected grant until the request expires", async () => {
      const store = await h.open();
      const a = await approvedRequest(store);
      expect(a).toMatchObject({
        status: "approved",
        grant: null,
        grant_jti: null,
        release: approved.release,
      });
      const first = await store.collectApprovalGrant(a.id, grant("j1"), late);
      expect(first).toMatchObject({ status: "approved", grant: grant("j1"), grant_jti: "j1" });
      expect(first?.release).toEqual(approved.release);
      // A second collection cannot replace it.
      expect(await store.collectApprovalGrant(a.id, grant("j2"), late)).toBeUndefined();
      expect((await store.getApproval(a.id))?.grant_jti).toBe("j1");
      // Nor can an uncollected request be collected at or after its expiry.
      const b = await approvedRequest(store);
      expect(await store.collectApprovalGrant(b.id, grant("j3"), expired)).toBeUndefined();
      // Pending, unknown: nothing to collect.
      const pending = await store.createApproval(newApproval());
      expect(await store.collectApprovalGrant(pending.id, grant("j4"), late)).toBeUndefined();
      expect(await store.collectApprovalGrant("missing", grant("j5"), late)).toBeUndefined();
    });

    it("of racing collections, exactly one records its grant", async () => {
      const store = await h.open();
      const a = await approvedRequest(store);
      const other = await h.openSame();
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 ? other : store).collectApprovalGrant(a.id, grant(`r${i}`), late),
        ),
      );
      const winners = results.filter((r) => r !== undefined);
      expect(winners).toHaveLength(1);
      expect((await store.getApproval(a.id))?.grant_jti).toBe(winners[0]?.grant_jti);
    });

    it("expires an approved request only when nobody collected it and it is due", async () => {
      const store = await h.open();
      const update: ApprovalUpdate = { ...approved, status: "expired", resolution: "expired", release: null };
      const a = await approvedRequest(store);
      expect(await store.closeUncollectedApproval(a.id, update, late)).toBeUndefined();
      expect(await store.closeUncollectedApproval(a.id, update, expired)).toMatchObject({
        status: "expired",
        resolution: "expired",
        grant: null,
      });
      const collected = await approvedRequest(store);
      await store.collectApprovalGrant(collected.id, grant("c1"), late);
      expect(await store.closeUncollectedApproval(collected.id, update, expired)).toBeUndefined();
      expect((await store.getApproval(collected.id))?.status).toBe("approved");
    });

    it("rejects an approved, uncollected request at any time (its resource moved), and only once", async () => {
      const store = await h.open();
      const stale: ApprovalUpdate = {
        ...approved,
        status: "rejected",
        resolution: "stale_revision",
        release: null,
      };
      const a = await approvedRequest(store);
      expect(await store.closeUncollectedApproval(a.id, stale, late)).toMatchObject({
        status: "rejected",
        resolution: "stale_revision",
      });
      expect(await store.closeUncollectedApproval(a.id, stale, late)).toBeUndefined();
      expect(await store.collectApprovalGrant(a.id, grant("s1"), late)).toBeUndefined();
      const collected = await approvedRequest(store);
      await store.collectApprovalGrant(collected.id, grant("s2"), late);
      expect(await store.closeUncollectedApproval(collected.id, stale, late)).toBeUndefined();
      // Neither pending nor approved: an update to pending or approved closes nothing.
      expect(
        await store.closeUncollectedApproval(a.id, { ...approved, status: "approved" }, late),
      ).toBeUndefined();
    });

    it("finds the newest open request of the same call: pending, or approved and uncollected", async () => {
      const store = await h.open();
      const first = await store.createApproval(newApproval());
      const call = newApproval();
      expect((await store.findOpenApproval(call, late))?.id).toBe(first.id);
      // Another requester, tenant, argument digest, resource or revision is another call.
      for (const other of [
        newApproval({ requester: { ...call.requester, id: "mallory" } }),
        newApproval({ requester: { ...call.requester, tenant: "evil" } }),
        newApproval({ action: { ...call.action, args_digest: "b".repeat(64) } }),
        newApproval({ resource: { type: "repo", id: "r2" } }),
        newApproval({ resource_revision: 4 }),
      ]) {
        expect(await store.findOpenApproval(other, late)).toBeUndefined();
      }
      // Past its expiry it is not open.
      expect(await store.findOpenApproval(call, expired)).toBeUndefined();
      // Approved and not collected: still open; collected: not.
      await store.decideApproval(first.id, "pending", approved, decidedAt);
      expect(await store.findOpenApproval(call, late)).toMatchObject({ id: first.id, status: "approved" });
      await store.collectApprovalGrant(first.id, grant("f1"), late);
      expect(await store.findOpenApproval(call, late)).toBeUndefined();
      // Rejected: not open; a newer pending one is found.
      const rejected = await store.createApproval(newApproval());
      await store.decideApproval(
        rejected.id,
        "pending",
        { ...approved, status: "rejected", resolution: "rejected", release: null },
        decidedAt,
      );
      expect(await store.findOpenApproval(call, late)).toBeUndefined();
      const newest = await store.createApproval(newApproval());
      expect((await store.findOpenApproval(call, late))?.id).toBe(newest.id);
    });
  });
}
