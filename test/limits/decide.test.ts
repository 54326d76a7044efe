/**
 * Limits at the decision stage, against an in-memory store and the unit policy
 * (test/pipeline/harness.ts): a session step budget, a value budget that fails closed and counts
 * the conditions' overrides, an approval's re-run charged to the requester, and a call waiting
 * for approval consuming nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { approve } from "../../src/approvals/index.ts";
import type { CallOutcome } from "../../src/core/gateway.ts";
import type { LimitsConfigInput } from "../../src/limits/index.ts";
import { handleProposal } from "../../src/pipeline/index.ts";
import { POLICY, type UnitGateway, unitGateway } from "../pipeline/harness.ts";

let u: UnitGateway | undefined;
let clock = new Date("2030-01-01T00:00:00Z");

afterEach(async () => {
  await u?.close();
  u = undefined;
});

async function gateway(limits: LimitsConfigInput, policy = POLICY): Promise<UnitGateway> {
  clock = new Date("2030-01-01T00:00:00Z");
  u = await unitGateway({ limits, policy, now: () => clock });
  return u;
}

async function propose(
  g: UnitGateway,
  tool: string,
  args: Record<string, unknown>,
  session?: string,
): Promise<CallOutcome> {
  const [outcome] = await handleProposal(g.gw, {
    authorization: await g.bearer("alice", ["dev"]),
    format: "canonical",
    payload: { tool, arguments: args },
    execute: false,
    requestId: "req",
    ...(session === undefined ? {} : { session }),
  });
  if (outcome === undefined) throw new Error("no outcome");
  return outcome;
}

describe("limits at the decision stage", () => {
  it("a step budget counts granted calls per session; calls without one share a budget", async () => {
    const g = await gateway([{ name: "steps", steps: 2 }]);
    const read = (session?: string) => propose(g, "notes_read", { note: "n1" }, session);
    expect((await read("s1")).decision).toBe("allow");
    expect((await read("s1")).decision).toBe("allow");
    const spent = await read("s1");
    expect(spent).toMatchObject({ decision: "deny", error: { category: "rate_limited", retryable: false } });
    expect(spent.error?.retry_after).toBeUndefined();
    expect(spent.error?.suggested_fix).toContain("new session");
    expect((await read("s2")).decision).toBe("allow");
    // Without a session: one shared budget for the subject, which cannot escape it by omitting it.
    expect((await read()).decision).toBe("allow");
    expect((await read()).decision).toBe("allow");
    expect((await read()).decision).toBe("deny");
    // A step budget never refills.
    clock = new Date(clock.getTime() + 365 * 86_400_000);
    expect((await read("s1")).error?.category).toBe("rate_limited");
  });

  it("a value budget refuses a call without a usable value: fail closed, nothing charged", async () => {
    const g = await gateway([
      { name: "pay", match: { tools: ["notes.pay"] }, value: { pointer: "/amount", max: 20, window_s: 60 } },
    ]);
    const missing = await propose(g, "notes_pay", { note: "n1" });
    expect(missing).toMatchObject({
      decision: "deny",
      error: { category: "invalid_argument", field_errors: [{ path: "/arguments/amount" }] },
    });
    expect(missing.grant).toBeUndefined();
    expect((await g.entries()).at(-1)).toMatchObject({ decision: "deny", error: "invalid_argument" });
    expect((await propose(g, "notes_pay", { note: "n1", amount: 20 })).decision).toBe(
      "allow_with_conditions",
    );
    // More than the whole budget never fits: not retryable.
    clock = new Date(clock.getTime() + 3_600_000);
    expect((await propose(g, "notes_pay", { note: "n1", amount: 21 })).error).toMatchObject({
      category: "rate_limited",
      retryable: false,
    });
  });

  it("a value budget counts the value after the conditions' overrides", async () => {
    const overriding = POLICY.replace(
      '"conditions": [{"type": "max_value", "path": "/amount", "max": 10}]',
      '"conditions": [{"type": "args_override", "args": {"amount": 7}}]',
    );
    const g = await gateway(
      [
        {
          name: "pay",
          match: { tools: ["notes.pay"] },
          value: { pointer: "/amount", max: 20, window_s: 60 },
        },
      ],
      overriding,
    );
    // The policy forces amount 7: the budget counts 7, not the 1 the call asked for.
    expect((await propose(g, "notes_pay", { note: "n1", amount: 1 })).decision).toBe("allow_with_conditions");
    expect((await propose(g, "notes_pay", { note: "n1", amount: 1 })).decision).toBe("allow_with_conditions");
    const over = await propose(g, "notes_pay", { note: "n1", amount: 1 });
    // 14 + 7 = 21 > 20: one unit over, refilled at 20 per 60 s → 3 s.
    expect(over.error).toMatchObject({ category: "rate_limited", retry_after: 3 });
    const entries = await g.entries();
    expect(entries.at(-1)).toMatchObject({ decision: "deny", error: "rate_limited", grant_jti: null });
    expect(entries.at(-1)?.input).toMatchObject({
      context: { usage: { pay: { kind: "value", used: 14, limit: 20, remaining: 6, window_s: 60 } } },
    });
  });

  it("a call waiting for approval consumes nothing; the approval charges the requester", async () => {
    const g = await gateway([
      { name: "writes", match: { side_effect: ["committing"] }, calls: 1, window_s: 30 },
    ]);
    const write = () => propose(g, "notes_write", { note: "n1", text: "hello" });
    const first = await write();
    expect(first.decision).toBe("require_approval");
    const id = first.approval?.id ?? "";
    // The same call again: still pending, nothing was charged by either.
    expect((await write()).decision).toBe("require_approval");
    // Reads are not committing: not limited.
    expect((await propose(g, "notes_read", { note: "n1" })).decision).toBe("allow");
    const lead = g.subject("carol", ["lead"]);
    const { approval } = await approve(g.gw, id, lead, null, "req-approve");
    expect(approval.status).toBe("approved");

    // A second request approved within 30 s is over alice's limit: it stays pending.
    const second = await propose(g, "notes_write", { note: "n1", text: "again" });
    const secondId = second.approval?.id ?? "";
    await expect(approve(g.gw, secondId, lead, null, "req-approve-2")).rejects.toMatchObject({
      category: "rate_limited",
      retryAfter: 30,
    });
    const last = (await g.entries()).at(-1);
    expect(last).toMatchObject({ decision: "deny", error: "rate_limited", approval_id: secondId });
    expect(last?.input).toMatchObject({ context: { usage: { writes: { used: 1, remaining: 0 } } } });
    // 30 s later (before the request expires) the approver can approve it.
    clock = new Date(clock.getTime() + 30_000);
    expect((await approve(g.gw, secondId, lead, null, "req-approve-3")).approval.status).toBe("approved");
  });

  it("a tenant or subject match limits only those callers", async () => {
    const g = await gateway([
      { name: "others", match: { subjects: ["mallory"] }, calls: 1, window_s: 60 },
      {
        name: "tenant",
        match: { tenants: ["t1"], tools: ["notes.read"] },
        per: ["tenant"],
        calls: 2,
        window_s: 60,
      },
    ]);
    expect((await propose(g, "notes_read", { note: "n1" })).decision).toBe("allow");
    expect((await propose(g, "notes_read", { note: "n1" })).decision).toBe("allow");
    const third = await propose(g, "notes_read", { note: "n1" });
    expect(third.error?.message).toContain("tenant");
    expect(third.error?.message).not.toContain("others");
  });
});
