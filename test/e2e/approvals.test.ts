/**
 * Approvals end to end (DESIGN section 6): alice proposes `repo_apply_edit`, the policy answers
 * require_approval and Writ stores a pending request; carol (maintainer) approves and the grant is
 * released to alice; self-approval, rejection, expiry, a stale resource revision and approvers
 * without the role are refused; every transition is in the decision log with the approval id.
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { contentHash, DEMO_FILES } from "../../src/demo/repository.ts";
import { MemoryReplayCache, verifyGrant } from "../../src/executor/index.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import {
  canonicalCall,
  digestOf,
  errorOf,
  expectLogVerifies,
  grantViewSchema,
  logEntries,
  logEntry,
  type Outcome,
  onlyOutcome,
  readForEdit,
  reasonSchema,
  WS,
} from "./api.ts";

const approvalSchema = z.strictObject({
  id: z.string(),
  status: z.enum(["pending", "approved", "rejected", "expired"]),
  resolution: z.enum(["approved", "rejected", "policy_denied", "stale_revision", "expired"]).nullable(),
  requester: z.strictObject({
    id: z.string(),
    tenant: z.string(),
    roles: z.array(z.string()),
    scopes: z.array(z.string()),
  }),
  tool: z.strictObject({ name: z.string(), version: z.string(), call_name: z.string() }),
  action: z.strictObject({
    name: z.string(),
    version: z.string(),
    side_effect: z.string(),
    args: z.record(z.string(), z.unknown()),
    args_digest: z.string(),
  }),
  resource: z.strictObject({ type: z.string(), id: z.string() }).nullable(),
  resource_revision: z.number().int().nullable(),
  policy_revision: z.string(),
  decision_id: z.string(),
  approver_roles: z.array(z.string()),
  requested_at: z.iso.datetime(),
  expires_at: z.iso.datetime(),
  decided_by: z.string().nullable(),
  decided_at: z.iso.datetime().nullable(),
  reason: z.string().nullable(),
  reasons: z.array(reasonSchema),
  grant_jti: z.string().nullable(),
  grant: grantViewSchema.optional(),
});
type Approval = z.infer<typeof approvalSchema>;

const approveAnswerSchema = z.strictObject({ approval: approvalSchema });
const rejectAnswerSchema = z.strictObject({ approval: approvalSchema });
const listSchema = z.strictObject({ approvals: z.array(approvalSchema), next_cursor: z.string().optional() });

const SUM = "src/sum.ts";

let gw: TestGateway;
let alice: string;
let carol: string;
let bob: string;

beforeAll(async () => {
  gw = await startTestGateway();
  alice = await gw.token("alice");
  carol = await gw.token("carol", { roles: ["maintainer"] });
  bob = await gw.token("bob", { roles: ["developer"] });
});

afterAll(async () => {
  await gw?.close();
});

function editArgs(baseHash: string) {
  return { workspace: WS, path: SUM, base_hash: baseHash, before: "a - b", after: "a + b" };
}

/** Reads src/sum.ts through the gateway (so the workspace records the base hash), then proposes the edit. */
async function proposeEdit(token = alice): Promise<{ outcome: Outcome; args: ReturnType<typeof editArgs> }> {
  const args = editArgs(await readForEdit(gw, token, SUM));
  const outcome = onlyOutcome(
    await gw.propose(token, { format: "canonical", payload: canonicalCall("repo_apply_edit", args) }),
  );
  return { outcome, args };
}

async function pendingId(
  token = alice,
): Promise<{ id: string; outcome: Outcome; args: ReturnType<typeof editArgs> }> {
  const { outcome, args } = await proposeEdit(token);
  expect(outcome.decision).toBe("require_approval");
  if (outcome.approval === undefined) throw new Error(`no approval: ${JSON.stringify(outcome)}`);
  return { id: outcome.approval.id, outcome, args };
}

async function getApproval(token: string, id: string): Promise<Approval> {
  const answer = await gw.request("GET", `/v1/approvals/${id}`, { token });
  expect(answer.status, answer.text).toBe(200);
  return approvalSchema.parse(answer.json);
}

function decide(token: string, id: string, verb: "approve" | "reject", body: unknown = {}) {
  return gw.request("POST", `/v1/approvals/${id}/${verb}`, { token, body });
}

async function entriesOf(approvalId: string) {
  const entries = await logEntries(gw, { action: "repo.apply_edit" });
  return entries.filter((e) => e.approval_id === approvalId).reverse();
}

describe("require_approval stores a pending request", () => {
  it("answers approval_required with an approval id, status pending, visible to the requester and approvers only", async () => {
    const { id, outcome, args } = await pendingId();
    expect(outcome.grant).toBeUndefined();
    expect(outcome.error?.category).toBe("approval_required");
    expect(outcome.approval).toMatchObject({ status: "pending", approver_roles: ["maintainer"] });

    const seen = await getApproval(alice, id);
    expect(seen).toMatchObject({
      status: "pending",
      resolution: null,
      requester: { id: "alice", tenant: "demo" },
      tool: { name: "repo.apply_edit", version: "1", call_name: "repo_apply_edit" },
      action: { name: "repo.apply_edit", args, args_digest: digestOf(args) },
      resource: { type: "workspace", id: WS },
      decision_id: outcome.decision_id,
    });
    const stored = await gw.gateway.store.getResource("workspace", WS);
    expect(seen.resource_revision).toBe(stored?.revision);
    expect(await getApproval(carol, id)).toMatchObject({ id, status: "pending" });

    // carol's pending list holds it; bob (no approver role, not the requester) sees nothing of it.
    const listed = await gw.request("GET", "/v1/approvals?status=pending", { token: carol });
    expect(listed.status, listed.text).toBe(200);
    expect(listSchema.parse(listed.json).approvals.map((a) => a.id)).toContain(id);
    const bobs = await gw.request("GET", "/v1/approvals", { token: bob });
    expect(listSchema.parse(bobs.json).approvals.map((a) => a.id)).not.toContain(id);
    expect(errorOf(await gw.request("GET", `/v1/approvals/${id}`, { token: bob }), 404).category).toBe(
      "not_found",
    );

    // The request is in the log with its approval id.
    const entry = await logEntry(gw, outcome.decision_id);
    expect(entry).toMatchObject({ decision: "require_approval", approval_id: id, path: "writ/decision" });
  });
});

describe("approve", () => {
  it("carol's approval re-runs the policy; alice collects the grant for the exact action", async () => {
    const { id, args } = await pendingId();
    const answer = await decide(carol, id, "approve", { reason: "looks right" });
    expect(answer.status, answer.text).toBe(200);
    const { approval } = approveAnswerSchema.parse(answer.json);
    expect(approval).toMatchObject({
      status: "approved",
      resolution: "approved",
      decided_by: "carol",
      reason: "looks right",
      grant_jti: null, // minted when alice collects it
    });
    expect(approval.grant).toBeUndefined(); // the token is for the requester
    // carol reading it collects nothing.
    expect((await getApproval(carol, id)).grant_jti).toBeNull();

    // alice collects the grant from the approval; it is decided once.
    const mine = await getApproval(alice, id);
    expect(mine.status).toBe("approved");
    const grant = mine.grant;
    if (!grant) throw new Error(`no grant: ${JSON.stringify(mine)}`);
    expect(mine.grant_jti).toBe(grant.jti);
    expect((await getApproval(alice, id)).grant).toEqual(grant); // collected again: the same grant
    expect(errorOf(await decide(carol, id, "approve"), 409).category).toBe("conflict");
    expect(errorOf(await decide(carol, id, "reject", { reason: "too late" }), 409).category).toBe("conflict");

    const claims = decodeJwt(grant.token);
    expect(claims).toMatchObject({
      sub: "alice",
      tnt: "demo",
      act: { name: "repo.apply_edit", version: "1" },
      res: { type: "workspace", id: WS, rev: String(approval.resource_revision) },
      args: digestOf(args),
      jti: grant.jti,
    });
    // An executor accepts it for exactly these arguments.
    await verifyGrant(grant.token, {
      issuer: "writ",
      audience: "writ",
      keys: gw.jwksUrl,
      action: { name: "repo.apply_edit", version: "1" },
      resource: { type: "workspace", id: WS },
      args,
      replay: new MemoryReplayCache(),
    });

    const entries = await entriesOf(id);
    expect(entries.map((e) => [e.path, e.decision, e.grant_jti])).toEqual([
      ["writ/decision", "require_approval", null],
      ["writ/decision", "allow", null],
      ["writ/approvals", "allow", grant.jti],
    ]);
    expect(entries[1]).toMatchObject({ subject: "alice" });
    expect(entries[1]?.input).toMatchObject({
      subject: { id: "alice" },
      context: { approval: { id, approver: { id: "carol", roles: ["maintainer"] } } },
    });
    expect(entries[2]).toMatchObject({ subject: "alice" });
    expect(claims.dec).toBe(entries[1]?.decision_id);
  });

  it("refuses self-approval by a maintainer requester and leaves the request pending", async () => {
    const maintainerAlice = await gw.token("alice", { roles: ["developer", "maintainer"] });
    const { id } = await pendingId(maintainerAlice);
    const refused = errorOf(await decide(maintainerAlice, id, "approve"), 403);
    expect(refused.category).toBe("forbidden");
    expect(refused.message).toContain("own request");
    expect((await getApproval(maintainerAlice, id)).status).toBe("pending");
    const entries = await entriesOf(id);
    expect(entries.map((e) => [e.path, e.decision])).toEqual([
      ["writ/decision", "require_approval"],
      ["writ/decision", "require_approval"],
    ]);
    // Another maintainer can still approve it.
    expect((await decide(carol, id, "approve")).status).toBe(200);
  });

  it("refuses users without an approver role (403), in another tenant too", async () => {
    const { id } = await pendingId();
    expect(errorOf(await decide(bob, id, "approve"), 403).category).toBe("forbidden");
    // The requester without the role sees the request but cannot decide it.
    expect(errorOf(await decide(alice, id, "approve"), 403).category).toBe("forbidden");
    const foreign = await gw.token("carol", { tenant: "other", roles: ["maintainer"] });
    expect(errorOf(await decide(foreign, id, "approve"), 403).category).toBe("forbidden");
    expect(errorOf(await decide(bob, "no-such-approval", "approve"), 403).category).toBe("forbidden");
    expect((await getApproval(alice, id)).status).toBe("pending");
  });

  it("ends as stale_revision when the workspace changed between request and approval", async () => {
    const { id } = await pendingId();
    // alice reads another file: the workspace's revision moves.
    await gw.propose(alice, {
      format: "canonical",
      payload: canonicalCall("repo.read", { workspace: WS, path: "README.md" }),
      execute: true,
    });
    const refused = errorOf(await decide(carol, id, "approve"), 409);
    expect(refused.category).toBe("stale_revision");
    const after = await getApproval(alice, id);
    expect(after).toMatchObject({ status: "rejected", resolution: "stale_revision", decided_by: "carol" });
    expect(after.grant).toBeUndefined();
    expect(after.reasons.map((r) => r.code)).toEqual(["stale_revision"]);
    const entries = await entriesOf(id);
    expect(entries.at(-1)).toMatchObject({ decision: "deny", error: "stale_revision", grant_jti: null });
  });
});

describe("reject and expiry", () => {
  it("reject needs a reason, records it, and the request cannot be approved afterwards", async () => {
    const { id } = await pendingId();
    const missing = errorOf(await decide(carol, id, "reject", {}), 400);
    expect(missing.field_errors.map((f) => f.path)).toContain("/reason");
    const answer = await decide(carol, id, "reject", { reason: "edit the tests too" });
    expect(answer.status, answer.text).toBe(200);
    expect(rejectAnswerSchema.parse(answer.json).approval).toMatchObject({
      status: "rejected",
      resolution: "rejected",
      decided_by: "carol",
      reason: "edit the tests too",
    });
    expect(errorOf(await decide(carol, id, "approve"), 409).category).toBe("conflict");
    const entries = await entriesOf(id);
    expect(entries.map((e) => [e.path, e.decision])).toEqual([
      ["writ/decision", "require_approval"],
      ["writ/approvals", "deny"],
    ]);
    expect(entries[1]?.input).toMatchObject({ approval: { id, from: "pending", to: "rejected" } });
  });

  it("a request past its expiry is expired when decided (approval_expired) and when read", async () => {
    const first = await pendingId();
    const second = await pendingId();
    const later = Date.now() + 901_000; // the policy's ttl is 900 s
    gw.gateway.now = () => new Date(later);
    try {
      expect(errorOf(await decide(carol, first.id, "approve"), 410).category).toBe("approval_expired");
      expect(await getApproval(alice, first.id)).toMatchObject({ status: "expired", resolution: "expired" });
      expect(await getApproval(alice, second.id)).toMatchObject({ status: "expired" });
      const pending = listSchema.parse(
        (await gw.request("GET", "/v1/approvals?status=pending", { token: carol })).json,
      );
      expect(pending.approvals).toEqual([]);
    } finally {
      delete gw.gateway.now;
    }
    for (const id of [first.id, second.id]) {
      const entries = await entriesOf(id);
      expect(entries.map((e) => [e.path, e.error])).toEqual([
        ["writ/decision", null],
        ["writ/approvals", "approval_expired"],
      ]);
    }
  });

  it("keeps the decision log's hash chain intact", async () => {
    await expectLogVerifies(gw);
    // The file was never written by an approval: nothing executed.
    expect(await gw.repository.read(SUM)).toBe(DEMO_FILES[SUM]);
    expect(contentHash(DEMO_FILES[SUM] ?? "")).toHaveLength(64);
  });
});
