/** Which bucket a call is counted in: callers never share or spend each other's. */
import { describe, expect, it } from "vitest";
import { bucketKey, Limits, limitsConfigSchema, NO_LIMITS } from "../../src/limits/index.ts";

const limits = new Limits(
  limitsConfigSchema.parse([
    { name: "per-session", per: ["session"], calls: 5, window_s: 60 },
    { name: "per-tenant", per: ["tenant"], match: { side_effect: ["committing"] }, calls: 5, window_s: 60 },
    { name: "per-tool", per: ["tool"], match: { tools: ["x.write"] }, steps: 3 },
  ]),
);
const alice = { id: "alice", tenant: "t1" };
const read = { name: "x.read", side_effect: "none" as const };
const write = { name: "x.write", side_effect: "committing" as const };

describe("limit buckets", () => {
  it("scopes a session within its subject and tenant, and a subject within its tenant", () => {
    const [session] = limits.applicable(alice, read);
    if (session === undefined) throw new Error("the session limit applies");
    const key = (subject: { id: string; tenant: string }, s?: string) =>
      bucketKey(session, { subject, action: read, session: s });
    expect(key(alice, "s1")).not.toBe(key({ id: "bob", tenant: "t1" }, "s1"));
    expect(key(alice, "s1")).not.toBe(key({ id: "alice", tenant: "t2" }, "s1"));
    expect(key(alice, "s1")).not.toBe(key(alice, "s2"));
    // No session: the subject's one shared bucket.
    expect(key(alice)).toBe(key(alice));
    expect(key(alice)).not.toBe(key(alice, "s1"));
  });

  it("matches by tool and side effect; a step budget is per session even when per says otherwise", () => {
    expect(limits.applicable(alice, read).map((l) => l.name)).toEqual(["per-session"]);
    const applied = limits.applicable(alice, write);
    expect(applied.map((l) => l.name)).toEqual(["per-session", "per-tenant", "per-tool"]);
    expect(applied[2]?.per).toEqual(["tool", "session"]);
    const tenant = applied[1];
    if (tenant === undefined) throw new Error("the tenant limit applies");
    const keyOf = (subject: { id: string; tenant: string }) =>
      bucketKey(tenant, { subject, action: write, session: "s" });
    expect(keyOf(alice)).toBe(keyOf({ id: "bob", tenant: "t1" }));
    expect(keyOf(alice)).not.toBe(keyOf({ id: "alice", tenant: "t2" }));
  });

  it("answers the same empty array when nothing applies", () => {
    const none = new Limits(
      limitsConfigSchema.parse([{ name: "w", match: { tools: ["x.write"] }, steps: 1 }]),
    );
    expect(none.applicable(alice, read)).toBe(NO_LIMITS);
    expect(new Limits([]).applicable(alice, read)).toBe(NO_LIMITS);
  });
});
