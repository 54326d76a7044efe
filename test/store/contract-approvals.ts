/** The `Store` contract, continued: approval requests and idempotency keys. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ApprovalUpdate, NewApproval } from "../../src/store/index.ts";
import { expectWritError, type StoreHarness } from "./contract.ts";

export function newApproval(overrides: Partial<NewApproval> = {}): NewApproval {
  return {
    id: randomUUID(),
    requester: { id: "alice", tenant: "acme", roles: ["developer"], scopes: [], issuer: "idp", claims: {} },
    tool: { name: "repo.write", version: "1", call_name: "repo_write" },
    action: {
      name: "repo.write",
      version: "1",
      side_effect: "reversible",
      idempotency: "natural",
      data_classification: "internal",
      args: { path: "README.md" },
      args_digest: "a".repeat(64),
    },
    resource: { type: "repo", id: "r1" },
    resource_revision: 3,
    policy_revision: "rev-1",
    decision_id: randomUUID(),
    source: "canonical",
    session: null,
    approver_roles: ["reviewer"],
    requested_at: "2030-01-01T00:00:00.000Z",
    expires_at: "2030-01-01T01:00:00.000Z",
    ...overrides,
  };
}

const before = new Date("2030-01-01T00:30:00Z");
const after = new Date("2030-01-01T02:00:00Z");

function approve(by = "bob"): ApprovalUpdate {
  return {
    status: "approved",
    resolution: "approved",
    decided_by: by,
    decided_at: before.toISOString(),
    reason: null,
    reasons: [],
    grant: { token: "t", jti: `jti-${by}`, audience: "writ", expires_at: after.toISOString(), max_uses: 1 },
  };
}

export function approvalContract(h: StoreHarness): void {
  describe("approvals", () => {
    it("stores a pending request and reads it back", async () => {
      const store = await h.open();
      const request = newApproval();
      const created = await store.createApproval(request);
      expect(created).toMatchObject({ ...request, status: "pending", grant: null, grant_jti: null });
      expect(await store.getApproval(request.id)).toEqual(created);
      expect(await store.getApproval("missing")).toBeUndefined();
      await expectWritError(store.createApproval(request), "conflict");
      await expectWritError(store.createApproval(newApproval({ expires_at: "soon" })), "invalid_argument");
    });

    it("decides once: the second decision and a decision after expiry get nothing", async () => {
      const store = await h.open();
      const request = await store.createApproval(newApproval());
      const decided = await store.decideApproval(request.id, "pending", approve("bob"), before);
      expect(decided).toMatchObject({ status: "approved", decided_by: "bob", grant_jti: "jti-bob" });
      expect(decided?.grant?.jti).toBe("jti-bob");
      expect(await store.decideApproval(request.id, "pending", approve("carol"), before)).toBeUndefined();
      expect(await store.getApproval(request.id)).toEqual(decided);

      const late = await store.createApproval(newApproval());
      expect(await store.decideApproval(late.id, "pending", approve(), after)).toBeUndefined();
      const expired = await store.decideApproval(
        late.id,
        "pending",
        { ...approve(), status: "expired", resolution: "expired", decided_by: null, grant: null },
        after,
      );
      expect(expired).toMatchObject({ status: "expired", resolution: "expired", grant: null });
      expect(await store.decideApproval("missing", "pending", approve(), before)).toBeUndefined();
    });

    it("lists one tenant's approvals newest first (the tenant is required), filtered by status, requester or approver roles, in pages", async () => {
      const store = await h.open();
      const a = await store.createApproval(newApproval());
      const b = await store.createApproval(
        newApproval({
          requester: { id: "dave", tenant: "beta", roles: [], scopes: [], issuer: "idp", claims: {} },
          approver_roles: ["admin"],
        }),
      );
      const c = await store.createApproval(newApproval({ approver_roles: ["admin", "lead"] }));
      await store.decideApproval(a.id, "pending", approve(), before);
      const ids = async (
        filter: Omit<Parameters<typeof store.listApprovals>[0], "tenant">,
        tenant = "acme",
      ) => (await store.listApprovals({ tenant, ...filter }, 50)).approvals.map((r) => r.id);
      expect(await ids({})).toEqual([c.id, a.id]);
      expect(await ids({ status: "pending" })).toEqual([c.id]);
      expect(await ids({}, "beta")).toEqual([b.id]);
      expect(await ids({}, "nobody")).toEqual([]);
      // The tenant bounds every other filter: beta's requester and roles do not reach into acme.
      expect(await ids({ requester: "dave" })).toEqual([]);
      expect(await ids({ requester: "dave" }, "beta")).toEqual([b.id]);
      expect(await ids({ approverRoles: ["lead"] })).toEqual([c.id]);
      expect(await ids({ approverRoles: ["admin"] })).toEqual([c.id]);
      expect(await ids({ requester: "dave", approverRoles: ["reviewer"] })).toEqual([a.id]);
      expect(await ids({ approverRoles: [] })).toEqual([]);
      const first = await store.listApprovals({ tenant: "acme" }, 1);
      expect(first.approvals.map((r) => r.id)).toEqual([c.id]);
      const second = await store.listApprovals({ tenant: "acme" }, 1, first.next_cursor);
      expect(second.approvals.map((r) => r.id)).toEqual([a.id]);
      expect(second.next_cursor).toBeUndefined();
      await expectWritError(store.listApprovals(JSON.parse("{}"), 10), "invalid_argument");
      const bad = JSON.parse('{"state": "pending"}');
      await expectWritError(store.listApprovals(bad, 10), "invalid_argument");
    });
  });
}

export function idempotencyContract(h: StoreHarness): void {
  describe("idempotency keys", () => {
    const now = new Date("2030-01-01T00:00:00Z");
    const later = new Date("2030-01-01T00:10:00Z");
    const muchLater = new Date("2030-01-01T00:20:00Z");

    it("claims once, reports the pending claim, then the stored outcome", async () => {
      const store = await h.open();
      expect(await store.claimIdempotency("alice", "k1", "d1", later, now)).toEqual({ state: "claimed" });
      expect(await store.claimIdempotency("alice", "k1", "d2", later, now)).toEqual({
        state: "pending",
        request_digest: "d1",
      });
      // Keys are per subject.
      expect(await store.claimIdempotency("bob", "k1", "d1", later, now)).toEqual({ state: "claimed" });
      await store.completeIdempotency("alice", "k1", { status: 200, body: { ok: true } });
      expect(await store.claimIdempotency("alice", "k1", "d1", later, now)).toEqual({
        state: "done",
        request_digest: "d1",
        outcome: { status: 200, body: { ok: true } },
      });
    });

    it("releases a pending claim, and replaces an expired one", async () => {
      const store = await h.open();
      await store.claimIdempotency("alice", "k2", "d1", later, now);
      await store.releaseIdempotency("alice", "k2");
      expect(await store.claimIdempotency("alice", "k2", "d2", later, now)).toEqual({ state: "claimed" });
      await store.completeIdempotency("alice", "k2", "first");
      // A completed key is not released.
      await store.releaseIdempotency("alice", "k2");
      expect((await store.claimIdempotency("alice", "k2", "d2", later, now)).state).toBe("done");
      expect(await store.claimIdempotency("alice", "k2", "d3", muchLater, later)).toEqual({
        state: "claimed",
      });
    });
  });
}
