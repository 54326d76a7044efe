/** Each stage of the pipeline on its own, against an in-memory store and a compiled policy. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WritError } from "../../src/core/errors.ts";
import type { ProposedCall } from "../../src/core/types.ts";
import { normalize } from "../../src/normalize/index.ts";
import { intake } from "../../src/pipeline/01-intake.ts";
import { normalizeCalls } from "../../src/pipeline/02-normalize.ts";
import { identify, logRefusedRequest } from "../../src/pipeline/03-identity.ts";
import { resourceContext } from "../../src/pipeline/04-resource.ts";
import { allows, decide, denial, policyInput, visible } from "../../src/pipeline/05-decide.ts";
import { approvalRequired, requestApproval } from "../../src/pipeline/06-approval.ts";
import { executorOf, issueGrant } from "../../src/pipeline/07-grant.ts";
import { currentRevision, logDecision, logRequestRefusal } from "../../src/pipeline/08-log.ts";
import { dispatch } from "../../src/pipeline/09-dispatch.ts";
import { result } from "../../src/pipeline/10-result.ts";
import { type UnitGateway, unitGateway } from "./harness.ts";

let u: UnitGateway;
beforeEach(async () => {
  u = await unitGateway();
});
afterEach(async () => {
  await u.close();
});

const canonical = (tool: string, args: Record<string, unknown>) => ({ tool, arguments: args });
const REQ = { format: "canonical" as const, requestId: "req-1" };

function call(tool: string, args: Record<string, unknown>): ProposedCall {
  return { callId: "c1", tool, arguments: args, source: "canonical", pointer: "" };
}

async function allowed(tool: string, args: Record<string, unknown>) {
  const n = normalize(call(tool, args), u.gw.contracts);
  const { context } = await resourceContext(u.gw.store, n.resource);
  const evaluation = decide(
    u.gw,
    policyInput(u.subject("alice"), n.action, context, { requestId: "r", source: "canonical" }),
    "call",
  );
  const grant = await issueGrant(u.gw, {
    subject: u.subject("alice"),
    contract: n.contract,
    action: n.action,
    resource: n.resource,
    resourceRevision: context.revision,
    decision: evaluation.decision,
    decisionId: "d1",
    policyRevision: evaluation.revision,
  });
  return { n, grant };
}

describe("1. intake", () => {
  it("parses a canonical payload into proposed calls", async () => {
    const calls = await intake(u.gw, { ...REQ, payload: canonical("notes_read", { note: "n1" }) });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ tool: "notes_read", arguments: { note: "n1" }, source: "canonical" });
    expect(await u.entries()).toEqual([]);
  });

  it("logs a malformed payload as an error decision, then refuses it", async () => {
    await expect(intake(u.gw, { ...REQ, payload: { nonsense: true }, session: "s" })).rejects.toBeInstanceOf(
      WritError,
    );
    const [entry, ...rest] = await u.entries();
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({
      path: "writ/intake",
      decision: "error",
      subject: null,
      request_id: "req-1",
    });
    expect(entry?.input).toEqual({ format: "canonical", session: "s" });
  });
});

describe("2. normalize", () => {
  it("keeps each call's error beside the calls that normalize", () => {
    const out = normalizeCalls(u.gw.contracts, [call("notes_read", { note: "n1" }), call("nope", {})]);
    expect(out[0]).not.toBeInstanceOf(WritError);
    expect(out[1]).toBeInstanceOf(WritError);
    expect(out[1]).toMatchObject({ category: "unknown_tool" });
  });
});

describe("3. identity", () => {
  it("maps a valid bearer token to its subject, logging nothing", async () => {
    const subject = await identify(
      u.gw,
      { authorization: await u.bearer("alice", ["dev"]), requestId: "r" },
      [],
      [],
    );
    expect(subject).toMatchObject({ id: "alice", tenant: "t1", roles: ["dev"] });
    expect(await u.entries()).toEqual([]);
  });

  it("takes the subject an entrance already verified, without verifying again", async () => {
    const verified = await identify(
      u.gw,
      { authorization: await u.bearer("alice", ["dev"]), requestId: "r" },
      [],
      [],
    );
    // No token at all: only the subject the entrance passes can answer.
    const subject = await identify(
      u.gw,
      { authorization: undefined, subject: verified, requestId: "r" },
      [],
      [],
    );
    expect(subject).toBe(verified);
    expect(await u.entries()).toEqual([]);
  });

  it("logs every call of an unauthenticated request, then refuses it", async () => {
    const calls = [call("notes_read", { note: "n1" }), call("nope", {})];
    const refused = identify(
      u.gw,
      { authorization: undefined, requestId: "r" },
      calls,
      normalizeCalls(u.gw.contracts, calls),
    );
    await expect(refused).rejects.toMatchObject({ category: "unauthenticated" });
    const entries = await u.entries();
    expect(entries.map((e) => [e.decision, e.action, e.resource])).toEqual([
      ["error", "notes.read", { type: "note", id: "n1" }],
      ["error", null, null],
    ]);
  });

  it("logRefusedRequest logs a refusal decided elsewhere the same way, without verifying again", async () => {
    const error = new WritError("unauthenticated", "no token", { suggestedFix: "send one" });
    await logRefusedRequest(u.gw, { ...REQ, payload: canonical("notes_read", { note: "n1" }) }, error);
    const [entry] = await u.entries();
    expect(entry).toMatchObject({ decision: "error", error: "unauthenticated", action: "notes.read" });
    expect(entry?.reasons).toEqual([
      { code: "unauthenticated", message: "no token", visible_to_model: true },
    ]);
  });
});

describe("4. resource", () => {
  it("reads ownership and revision; an unknown resource is passed as unknown", async () => {
    const known = await resourceContext(u.gw.store, { type: "note", id: "n1" });
    expect(known.context).toMatchObject({ known: true, owner: "alice", tenant: "t1", revision: "1" });
    const unknown = await resourceContext(u.gw.store, { type: "note", id: "zz" });
    expect(unknown).toEqual({
      context: { type: "note", id: "zz", known: false, attributes: {} },
      stored: undefined,
    });
    expect((await resourceContext(u.gw.store, undefined)).context.type).toBe("none");
  });
});

describe("5. decide", () => {
  const action = (name: string) =>
    normalize(call(name.replace(".", "_"), { note: "n1" }), u.gw.contracts).action;

  it("builds the policy input with the call's context", () => {
    const input = policyInput(
      u.subject("alice"),
      action("notes.read"),
      { type: "none", id: "", known: false, attributes: {} },
      {
        requestId: "r",
        source: "mcp",
        session: "s",
        at: new Date(2),
      },
    );
    expect(input.context).toEqual({
      time_ns: 2_000_000,
      request_id: "r",
      source: "mcp",
      session: "s",
      phase: "call",
    });
  });

  it("returns the policy's decision and revision", () => {
    const ctx = { type: "none", id: "", known: false, attributes: {} };
    const e = decide(
      u.gw,
      policyInput(u.subject("alice"), action("notes.read"), ctx, { requestId: "r", source: "canonical" }),
      "call",
    );
    expect(e.decision.decision).toBe("allow");
    expect(allows(e.decision)).toBe(true);
    expect(e.failure).toBeUndefined();
    expect(e.revision).toBe(u.gw.policy.revision);
  });

  it("fails closed on a malformed decision, with the failure kept for the log", () => {
    const ctx = { type: "none", id: "", known: false, attributes: {} };
    const e = decide(
      u.gw,
      policyInput(u.subject("alice"), action("notes.broken"), ctx, { requestId: "r", source: "canonical" }),
      "call",
    );
    expect(e.decision.decision).toBe("deny");
    expect(e.failure?.code).toBe("policy_malformed");
    expect(visible(e.decision.reasons)).toEqual([
      {
        code: "policy_unavailable",
        message: "the policy could not decide this call, so it is denied",
        visible_to_model: true,
      },
    ]);
  });

  it("a denial shows only the reasons the model may see", () => {
    const ctx = { type: "none", id: "", known: false, attributes: {} };
    const e = decide(
      u.gw,
      policyInput(u.subject("alice"), action("notes.secret"), ctx, { requestId: "r", source: "canonical" }),
      "call",
    );
    expect(denial(e.decision)).toMatchObject({ category: "policy_denied", message: "no rule allows this" });
  });
});

describe("6. approval", () => {
  it("stores a pending request bound to the call, with the policy's roles and expiry", async () => {
    const at = new Date("2030-01-01T00:00:00Z");
    u.gw.now = () => at;
    const c = call("notes_write", { note: "n1", text: "x" });
    const n = normalize(c, u.gw.contracts);
    const decision = {
      decision: "require_approval" as const,
      reasons: [],
      conditions: [],
      approval: { approver_roles: ["lead"], ttl_seconds: 60 },
    };
    const view = await requestApproval(u.gw, {
      subject: u.subject("alice"),
      call: c,
      normalized: n,
      resourceRevision: 1,
      decision,
      decisionId: "d1",
      policyRevision: "p1",
      session: null,
    });
    expect(view).toMatchObject({
      status: "pending",
      approver_roles: ["lead"],
      expires_at: "2030-01-01T00:01:00.000Z",
    });
    const stored = await u.store.getApproval(view.id);
    expect(stored).toMatchObject({
      resource: { type: "note", id: "n1" },
      resource_revision: 1,
      decision_id: "d1",
    });
    expect(approvalRequired(view)).toMatchObject({ category: "approval_required" });
  });
});

describe("7. grant", () => {
  it("signs a grant for the contract's executor, bound to the call and its conditions", async () => {
    const { n, grant } = await allowed("notes_pay", { note: "n1", amount: 5 });
    expect(grant.audience).toBe(executorOf(n.contract, u.gw));
    expect(grant.audience).toBe("writ-unit-executor");
    expect(grant.max_uses).toBe(1);
  });
});

describe("8. log", () => {
  it("appends a decision; a request refusal also counts as an error decision", async () => {
    const parts = {
      path: "writ/intake",
      input: {},
      policy_revision: currentRevision(u.gw),
      subject: null,
      tenant: null,
      action: null,
      resource: null,
      decision: "error" as const,
      request_id: "r",
    };
    const entry = await logDecision(u.gw, parts);
    await logRequestRefusal(u.gw, parts);
    expect((await u.entries()).map((e) => e.decision_id)[0]).toBe(entry.decision_id);
    expect(await u.gw.metrics.render()).toMatch(/decision="error"} 1/);
  });
});

describe("9–10. dispatch and result", () => {
  it("runs the backend once with a valid grant, and shapes the result", async () => {
    const { n, grant } = await allowed("notes_read", { note: "n1" });
    const ran = await dispatch(u.gw, { n, token: grant.token, requestId: "r" });
    expect(u.runs.count).toBe(1);
    const shaped = result(u.gw, n, ran, "r");
    expect(shaped.structured_content).toEqual({ args: { note: "n1" }, revision: 1 });
    await expect(dispatch(u.gw, { n, token: grant.token, requestId: "r" })).rejects.toMatchObject({
      category: "policy_denied",
      effectCommitted: false,
    });
    expect(u.runs.count).toBe(1);
  });

  it("enforces the grant's conditions before the backend runs", async () => {
    const { grant } = await allowed("notes_pay", { note: "n1", amount: 5 });
    const other = normalize(call("notes_pay", { note: "n1", amount: 50 }), u.gw.contracts);
    await expect(dispatch(u.gw, { n: other, token: grant.token, requestId: "r" })).rejects.toBeInstanceOf(
      WritError,
    );
    expect(u.runs.count).toBe(0);
  });

  it("refuses a grant issued to someone else when the caller is given", async () => {
    const { n, grant } = await allowed("notes_read", { note: "n1" });
    const bob = u.subject("bob");
    await expect(
      dispatch(u.gw, { n, token: grant.token, requestId: "r", subject: bob }),
    ).rejects.toMatchObject({
      category: "policy_denied",
    });
  });
});
