/**
 * Approvals survive a slow agent: the grant is minted when the requester collects it, at any time
 * before the request expires, and lives its TTL from then; it runs once however often it is
 * collected; the identical call proposed again gets its open request back.
 *
 * The process clock is faked (Date only: timers run), so the grant signer, the grant verifier,
 * the approvals and the store all see the same "ten minutes later" without waiting for it.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { approve, readApproval } from "../../src/approvals/index.ts";
import type { CallOutcome } from "../../src/core/gateway.ts";
import { executeWithGrant, handleProposal } from "../../src/pipeline/index.ts";
import { POLICY, type UnitGateway, unitGateway, writErrorOf } from "../pipeline/harness.ts";

const T0 = new Date("2030-01-01T00:00:00Z").getTime();
const MINUTE = 60_000;

/** The harness's policy with the sample's lifetimes: a 15-minute approval, a 60 s grant. */
const policy = POLICY.replace('"ttl_seconds": 60}', '"ttl_seconds": 900}').replace(
  'decision := {"decision": "allow", "reasons": [], "conditions": []} if {\n\tinput.action.name == "notes.write"',
  'decision := {"decision": "allow", "reasons": [], "conditions": [], "grant": {"ttl_seconds": 60, "max_uses": 1}} if {\n\tinput.action.name == "notes.write"',
);

let u: UnitGateway;
beforeEach(async () => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(T0);
  u = await unitGateway({ policy });
});
afterEach(async () => {
  await u.close();
  vi.useRealTimers();
});

const alice = () => u.subject("alice", ["dev"]);
const lead = () => u.subject("carol", ["lead"]);
const ARGS = { note: "n1", text: "hello" };

async function propose(
  args: Record<string, unknown> = ARGS,
  requestId = "req-propose",
): Promise<CallOutcome> {
  const [outcome] = await handleProposal(u.gw, {
    authorization: await u.bearer("alice", ["dev"]),
    format: "canonical",
    payload: { tool: "notes_write", arguments: args },
    execute: false,
    requestId,
  });
  if (!outcome) throw new Error("no outcome");
  return outcome;
}

function run(token: string, requestId: string) {
  return executeWithGrant(u.gw, {
    authorization: undefined,
    subject: alice(),
    grant: token,
    call: { tool: "notes_write", arguments: ARGS },
    requestId,
  });
}

describe("collecting an approved request's grant", () => {
  it("collected ten minutes after the approval, the grant is fresh and runs once", async () => {
    const id = (await propose()).approval?.id ?? "";
    vi.setSystemTime(T0 + MINUTE);
    await approve(u.gw, id, lead(), "fine");
    vi.setSystemTime(T0 + 11 * MINUTE); // ten minutes later: far past the 60 s grant TTL
    const collected = await readApproval(u.gw, id, alice());
    const grant = collected.grant;
    if (!grant) throw new Error(`no grant collected: ${JSON.stringify(collected)}`);
    expect(new Date(grant.expires_at).getTime()).toBe(T0 + 12 * MINUTE);
    await run(grant.token, "req-run");
    expect(u.runs.count).toBe(1);
  });

  it("a second collection returns the same grant, which cannot run twice", async () => {
    const id = (await propose()).approval?.id ?? "";
    await approve(u.gw, id, lead(), null);
    const first = await readApproval(u.gw, id, alice());
    const second = await readApproval(u.gw, id, alice());
    expect(second.grant).toEqual(first.grant);
    await run(first.grant?.token ?? "", "req-run-1");
    expect((await writErrorOf(run(second.grant?.token ?? "", "req-run-2"))).category).toBe("policy_denied");
    expect(u.runs.count).toBe(1);
    // One grant on the record for the request.
    const collections = (await u.entries()).filter(
      (e) => e.approval_id === id && e.path === "writ/approvals",
    );
    expect(collections.map((e) => e.grant_jti)).toEqual([first.grant_jti]);
  });

  it("racing collections release one grant", async () => {
    const id = (await propose()).approval?.id ?? "";
    await approve(u.gw, id, lead(), null);
    const reads = await Promise.all(Array.from({ length: 5 }, () => readApproval(u.gw, id, alice())));
    expect(new Set(reads.map((r) => r.grant?.jti)).size).toBe(1);
  });

  it("not collected before the request expires, the approval expires and nothing is released", async () => {
    const id = (await propose()).approval?.id ?? "";
    await approve(u.gw, id, lead(), null);
    vi.setSystemTime(T0 + 15 * MINUTE);
    const a = await readApproval(u.gw, id, alice(), "req-late");
    expect(a).toMatchObject({ status: "expired", resolution: "expired", grant: null });
    expect((await u.entries()).at(-1)).toMatchObject({
      approval_id: id,
      error: "approval_expired",
      request_id: "req-late",
    });
    // Proposing again opens a new request.
    expect((await propose()).approval?.id).not.toBe(id);
  });
});

describe("proposing the identical call again", () => {
  it("returns its pending request, then its approved one, and logs the decision naming it", async () => {
    const first = await propose();
    const id = first.approval?.id ?? "";
    const again = await propose(ARGS, "req-again");
    expect(again).toMatchObject({ decision: "require_approval", approval: { id, status: "pending" } });
    expect(again.decision_id).not.toBe(first.decision_id);
    const entry = (await u.entries()).find((e) => e.request_id === "req-again");
    expect(entry).toMatchObject({ decision: "require_approval", approval_id: id });

    await approve(u.gw, id, lead(), null);
    vi.setSystemTime(T0 + 5 * MINUTE);
    const approved = await propose(ARGS, "req-approved");
    expect(approved).toMatchObject({
      approval: { id, status: "approved" },
      error: { category: "approval_required" },
    });
    expect(approved.error?.suggested_fix).toContain(`/v1/approvals/${id}`);

    // Other arguments are another call; once collected, a new proposal is a new request.
    expect((await propose({ note: "n1", text: "other" })).approval?.id).not.toBe(id);
    await readApproval(u.gw, id, alice());
    expect((await propose()).approval?.id).not.toBe(id);
  });

  it("does not return a request of another requester", async () => {
    const id = (await propose()).approval?.id ?? "";
    const [bobs] = await handleProposal(u.gw, {
      authorization: await u.bearer("bob", ["dev"]),
      format: "canonical",
      payload: { tool: "notes_write", arguments: ARGS },
      execute: false,
      requestId: "req-bob",
    });
    expect(bobs?.approval?.id).toBeDefined();
    expect(bobs?.approval?.id).not.toBe(id);
  });
});
