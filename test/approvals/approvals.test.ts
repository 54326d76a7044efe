/** Approvals on their own: requested through the pipeline, decided here, against an in-memory store. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { approvalView, approve, listApprovals, readApproval, reject } from "../../src/approvals/index.ts";
import type { CallOutcome } from "../../src/core/gateway.ts";
import { handleProposal } from "../../src/pipeline/index.ts";
import { type UnitGateway, unitGateway } from "../pipeline/harness.ts";

let u: UnitGateway;
let clock: Date;
beforeEach(async () => {
  clock = new Date("2030-01-01T00:00:00Z");
  u = await unitGateway({ now: () => clock });
});
afterEach(async () => {
  await u.close();
});

const alice = () => u.subject("alice", ["dev"]);
const lead = () => u.subject("carol", ["lead"]);

/** alice proposes notes.write: the policy asks for a lead's approval. */
async function pending(): Promise<{ id: string; outcome: CallOutcome }> {
  const [outcome] = await handleProposal(u.gw, {
    authorization: await u.bearer("alice", ["dev"]),
    format: "canonical",
    payload: { tool: "notes_write", arguments: { note: "n1", text: "hello" } },
    execute: false,
    requestId: "req-propose",
  });
  if (!outcome?.approval) throw new Error("no approval was requested");
  return { id: outcome.approval.id, outcome };
}

describe("approvals", () => {
  it("a require_approval decision stores a pending request, logged with its id", async () => {
    const { id, outcome } = await pending();
    expect(outcome).toMatchObject({ decision: "require_approval", error: { category: "approval_required" } });
    const a = await readApproval(u.gw, id, alice());
    expect(a).toMatchObject({ status: "pending", approver_roles: ["lead"], resource_revision: 1 });
    const entries = await u.entries();
    expect(entries.at(-1)).toMatchObject({ decision: "require_approval", approval_id: id });
  });

  it("an approver's approval runs the policy again; the requester collects the grant by reading it", async () => {
    const { id } = await pending();
    const { approval } = await approve(u.gw, id, lead(), "looks fine", "req-approve");
    expect(approval).toMatchObject({ status: "approved", resolution: "approved", decided_by: "carol" });
    expect(approval).toMatchObject({ grant: null, grant_jti: null });
    expect((await u.entries()).at(-1)).toMatchObject({
      decision: "allow",
      approval_id: id,
      grant_jti: null,
      subject: "alice",
    });
    // The approver reading it collects nothing; the requester reading it does.
    expect((await readApproval(u.gw, id, lead())).grant).toBeNull();
    const collected = await readApproval(u.gw, id, alice(), "req-collect");
    expect(collected.grant?.jti).toBe(collected.grant_jti);
    expect((await u.entries()).at(-1)).toMatchObject({
      path: "writ/approvals",
      decision: "allow",
      approval_id: id,
      grant_jti: collected.grant_jti,
      request_id: "req-collect",
    });
    expect(approvalView(collected, alice())).toHaveProperty("grant");
    expect(approvalView(collected, lead())).not.toHaveProperty("grant");
  });

  it("the requester cannot approve their own request; it stays pending", async () => {
    const { id } = await pending();
    const self = u.subject("alice", ["lead"]);
    await expect(approve(u.gw, id, self, null)).rejects.toMatchObject({ category: "forbidden" });
    expect((await readApproval(u.gw, id, alice())).status).toBe("pending");
  });

  it("a changed resource revision ends the request as stale_revision", async () => {
    const { id } = await pending();
    const stored = await u.store.getResource("note", "n1");
    if (!stored) throw new Error("no note");
    await u.store.updateResourceAttributes("note", "n1", stored.revision, { color: "red" });
    await expect(approve(u.gw, id, lead(), null)).rejects.toMatchObject({ category: "stale_revision" });
    expect(await readApproval(u.gw, id, alice())).toMatchObject({
      status: "rejected",
      resolution: "stale_revision",
    });
    expect((await u.entries()).at(-1)).toMatchObject({ decision: "deny", error: "stale_revision" });
  });

  it("a rejection needs the role and is recorded with its reason", async () => {
    const { id } = await pending();
    await expect(reject(u.gw, id, u.subject("bob", ["dev"]), "no")).rejects.toMatchObject({
      category: "forbidden",
    });
    const rejected = await reject(u.gw, id, lead(), "not today");
    expect(rejected).toMatchObject({ status: "rejected", resolution: "rejected", reason: "not today" });
    await expect(approve(u.gw, id, lead(), null)).rejects.toMatchObject({ category: "conflict" });
    expect((await u.entries()).at(-1)).toMatchObject({ path: "writ/approvals", approval_id: id });
  });

  it("a request past its expiry is expired when read, and can no longer be decided", async () => {
    const { id } = await pending();
    clock = new Date("2030-01-01T00:05:00Z");
    expect((await readApproval(u.gw, id, lead())).status).toBe("expired");
    await expect(approve(u.gw, id, lead(), null)).rejects.toMatchObject({ category: "approval_expired" });
  });

  it("lists what a viewer may see, never another tenant's or a stranger's", async () => {
    const { id } = await pending();
    expect((await listApprovals(u.gw, lead(), {}, 10)).approvals.map((a) => a.id)).toEqual([id]);
    expect((await listApprovals(u.gw, u.subject("bob", ["dev"]), {}, 10)).approvals).toEqual([]);
    await expect(readApproval(u.gw, id, u.subject("bob", ["dev"]))).rejects.toMatchObject({
      category: "not_found",
    });
  });
});
