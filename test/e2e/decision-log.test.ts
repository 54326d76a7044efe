/**
 * The decision log API end to end: reviewers only, filters, cursor pagination, the grant of every
 * allowed call in its entry, and a hash chain that verifies.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import {
  canonicalCall,
  errorOf,
  expectLogVerifies,
  type LogEntry,
  logEntries,
  logEntry,
  logPageSchema,
  type Outcome,
  onlyOutcome,
  README_ARGS,
  WS,
} from "./api.ts";

let gw: TestGateway;
let reviewer: string;
const outcomes: Outcome[] = [];

async function decide(subject: string, tool: string, args: Record<string, unknown>): Promise<Outcome> {
  const token = await gw.token(subject);
  const outcome = onlyOutcome(
    await gw.propose(token, { format: "canonical", payload: canonicalCall(tool, args) }),
  );
  outcomes.push(outcome);
  return outcome;
}

beforeAll(async () => {
  gw = await startTestGateway();
  reviewer = await gw.token("rita", { roles: ["reviewer"] });
  // A known history: 4 allows (3 reads, 1 search), 3 denials, 1 error.
  for (let i = 0; i < 3; i++) await decide("alice", "repo.read", README_ARGS);
  await decide("alice", "repo.search", { workspace: WS, query: "sum" });
  await decide("alice", "repo.read", { workspace: WS, path: ".env" });
  await decide("alice", "repo.read", { workspace: WS, path: ".env" });
  await decide("bob", "repo.read", README_ARGS);
  await decide("alice", "repo.delete", { workspace: WS });
  expect(outcomes.map((o) => o.decision)).toEqual([
    "allow",
    "allow",
    "allow",
    "allow",
    "deny",
    "deny",
    "deny",
    "error",
  ]);
});

afterAll(async () => {
  await gw?.close();
});

async function query(params: Record<string, string>, token = reviewer) {
  return gw.request("GET", `/v1/decisions?${new URLSearchParams(params)}`, { token });
}

function ids(entries: LogEntry[]): string[] {
  return entries.map((e) => e.decision_id);
}

describe("access", () => {
  it("a reviewer reads the log (200)", async () => {
    const answer = await query({});
    expect(answer.status).toBe(200);
    const page = logPageSchema.parse(answer.json);
    expect(page.entries).toHaveLength(outcomes.length);
    // Newest first.
    const seqs = page.entries.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(ids(page.entries)).toEqual(outcomes.map((o) => o.decision_id).reverse());
  });

  it("an unknown decision id is 404 not_found", async () => {
    const answer = await gw.request("GET", "/v1/decisions/00000000-0000-4000-8000-000000000000", {
      token: reviewer,
    });
    expect(errorOf(answer, 404).category).toBe("not_found");
  });
});

describe("filters", () => {
  const expected = (keep: (o: Outcome, i: number) => boolean) =>
    outcomes
      .filter(keep)
      .map((o) => o.decision_id)
      .reverse();
  const subjects = ["alice", "alice", "alice", "alice", "alice", "alice", "bob", "alice"];
  const actions = [
    "repo.read",
    "repo.read",
    "repo.read",
    "repo.search",
    "repo.read",
    "repo.read",
    "repo.read",
    null,
  ];

  it("by subject", async () => {
    expect(ids(await logEntries(gw, { subject: "bob" }))).toEqual(expected((_, i) => subjects[i] === "bob"));
    const alice = await logEntries(gw, { subject: "alice" });
    expect(ids(alice)).toEqual(expected((_, i) => subjects[i] === "alice"));
    for (const e of alice) expect(e.subject).toBe("alice");
  });

  it("by action", async () => {
    expect(ids(await logEntries(gw, { action: "repo.search" }))).toEqual(
      expected((_, i) => actions[i] === "repo.search"),
    );
    expect(ids(await logEntries(gw, { action: "repo.read" }))).toEqual(
      expected((_, i) => actions[i] === "repo.read"),
    );
  });

  it("by decision, and combined", async () => {
    for (const decision of ["allow", "deny", "error"] as const) {
      expect(ids(await logEntries(gw, { decision }))).toEqual(expected((o) => o.decision === decision));
    }
    expect(ids(await logEntries(gw, { subject: "alice", decision: "deny" }))).toEqual(
      expected((o, i) => o.decision === "deny" && subjects[i] === "alice"),
    );
    expect(await logEntries(gw, { subject: "nobody" })).toEqual([]);
  });

  it("by reason code, including hidden ones", async () => {
    expect(ids(await logEntries(gw, { reason: "path_not_readable" }))).toHaveLength(2);
    expect(ids(await logEntries(gw, { reason: "not_owner" }))).toEqual(
      expected((_, i) => subjects[i] === "bob"),
    );
  });
});

describe("cursor pagination", () => {
  it("pages of 3 walk the whole log once, newest first", async () => {
    const seen: LogEntry[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const answer = await query({ limit: "3", ...(cursor ? { cursor } : {}) });
      expect(answer.status, answer.text).toBe(200);
      const page = logPageSchema.parse(answer.json);
      expect(page.entries.length).toBeLessThanOrEqual(3);
      seen.push(...page.entries);
      cursor = page.next_cursor;
      pages++;
      expect(pages).toBeLessThan(10);
    } while (cursor !== undefined);
    expect(pages).toBe(Math.ceil(outcomes.length / 3));
    expect(ids(seen)).toEqual(outcomes.map((o) => o.decision_id).reverse());
  });

  it("pagination composes with a filter", async () => {
    const first = logPageSchema.parse((await query({ subject: "alice", limit: "4" })).json);
    expect(first.entries).toHaveLength(4);
    const cursor = first.next_cursor;
    if (cursor === undefined) throw new Error("expected a second page");
    const second = logPageSchema.parse((await query({ subject: "alice", limit: "4", cursor })).json);
    expect(second.entries).toHaveLength(3);
    expect(second.next_cursor).toBeUndefined();
    for (const e of [...first.entries, ...second.entries]) expect(e.subject).toBe("alice");
  });

  it("a forged cursor or an out-of-range limit is invalid_argument", async () => {
    expect(errorOf(await query({ cursor: "not-a-cursor" }), 400).field_errors.map((f) => f.path)).toContain(
      "/cursor",
    );
    expect(errorOf(await query({ limit: "0" }), 400).category).toBe("invalid_argument");
    expect(errorOf(await query({ limit: "501" }), 400).category).toBe("invalid_argument");
  });
});

describe("grants in the log", () => {
  it("every allowed result's grant jti is in its log entry", async () => {
    const allowed = outcomes.filter((o) => o.decision === "allow");
    expect(allowed).toHaveLength(4);
    for (const o of allowed) {
      const jti = o.grant?.jti;
      expect(jti).toBeDefined();
      const entry = await logEntry(gw, o.decision_id);
      expect(entry).toMatchObject({ decision: "allow", grant_jti: jti, subject: "alice" });
      expect(entry.result).toMatchObject({ decision: "allow" });
    }
    const logged = (await logEntries(gw, { decision: "allow" })).map((e) => e.grant_jti);
    expect(new Set(logged)).toEqual(new Set(allowed.map((o) => o.grant?.jti)));
  });

  it("no other entry carries a grant", async () => {
    for (const e of await logEntries(gw)) {
      if (e.decision !== "allow") expect(e.grant_jti).toBeNull();
    }
  });

  it("the hash chain links every entry and verifies", async () => {
    const chain = (await logEntries(gw)).reverse();
    for (const [i, e] of chain.entries()) {
      expect(e.seq).toBe(i + 1);
      if (i > 0) expect(e.prev_hash).toBe(chain[i - 1]?.hash);
    }
    await expectLogVerifies(gw);
    await expect(gw.gateway.log.verify()).resolves.toMatchObject({ entries: chain.length });
  });
});

// Last: refused requests are decision-log entries too (writ/http), after the known history above.
describe("refused review requests", () => {
  it("a token without the reviewer role is forbidden (403)", async () => {
    const [first] = outcomes;
    if (first === undefined) throw new Error("no decision");
    for (const token of [await gw.token("alice"), await gw.token("ops", { roles: ["admin"] })]) {
      expect(errorOf(await query({}, token), 403)).toMatchObject({ status: "failed", category: "forbidden" });
      const one = await gw.request("GET", `/v1/decisions/${first.decision_id}`, { token });
      expect(errorOf(one, 403).category).toBe("forbidden");
    }
  });

  it("an unknown filter or a bad decision value is invalid_argument", async () => {
    expect(errorOf(await query({ decison: "allow" }), 400).category).toBe("invalid_argument");
    expect(errorOf(await query({ decision: "maybe" }), 400).field_errors.map((f) => f.path)).toContain(
      "/decision",
    );
  });

  it("each refusal above is on the log", async () => {
    const refused = await logEntries(gw, { path: "writ/http" });
    expect(refused.filter((e) => e.error === "forbidden")).toHaveLength(4);
    expect(refused.filter((e) => e.error === "invalid_argument")).toHaveLength(5);
  });
});
