/**
 * History facts through the gateway's public surface (issue 33), on SQLite: the default
 * configuration's reads_of_path and the sample policy's read_first (read before edit, per
 * session), a sum fact counted when a refund ran (a daily total), what a decision's entry records,
 * and a store that cannot read the facts (the decision fails closed).
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { canonicalCall, type Outcome, onlyOutcome, readForEdit, WS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

const REFUND_TOOL = {
  name: "payments.refund",
  version: "1",
  description: "Refund an amount (the demo's repo.finish handler stands in for the payments service).",
  side_effect: "reversible",
  idempotency: "natural",
  data_classification: "internal",
  resource: { type: "workspace", id: "/workspace" },
  input_schema: {
    type: "object",
    additionalProperties: false,
    required: ["workspace", "summary", "amount"],
    properties: {
      workspace: { type: "string" },
      summary: { type: "string", minLength: 1 },
      amount: { type: "number", minimum: 0 },
    },
  },
  backend: { kind: "inprocess", handler: "repo.finish" },
  model_views: [{ family: "default", name: "payments_refund" }],
};

const REFUNDED_TODAY = {
  name: "refunded_today",
  match: { tools: ["payments.refund"], decision: ["allow"], executed: true },
  per: ["subject"],
  window_s: 86_400,
  sum: "args.amount",
};

/** The refunds' rule beside the sample policy: at most 500 refunded a day per subject. */
const REFUNDS_REGO = `package writ

kind := "refund" if input.action.name == "payments.refund"

denials contains reason("daily_refund_total", "refunds are limited to 500 a day") if {
	kind == "refund"
	not discovering
	input.context.history.refunded_today.sum + args.amount > 500
}
`;

const historySchema = z.record(
  z.string(),
  z.object({
    count: z.number(),
    sum: z.number().optional(),
    last: z.object({ time_ns: z.number(), decision_id: z.string() }).optional(),
  }),
);
const loggedInputSchema = z.object({ context: z.object({ history: historySchema.optional() }) });

describe("history facts in the policy input", () => {
  let gw: TestGateway;
  let alice: string;
  let baseHash: string;

  beforeAll(async () => {
    gw = await startTestGateway({
      configure: (document, tmp) => {
        writeFileSync(path.join(tmp, "policies", "writ", "refunds.rego"), REFUNDS_REGO);
        const tools = z.array(z.unknown()).parse(document.tools);
        const history = z.array(z.unknown()).parse(document.history);
        return { ...document, tools: [...tools, REFUND_TOOL], history: [...history, REFUNDED_TODAY] };
      },
    });
    alice = await gw.token("alice");
    // A read without a session: the workspace records the hash, no session's fact counts it.
    baseHash = await readForEdit(gw, alice, "src/sum.ts");
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
  });

  const edit = () => ({
    workspace: WS,
    path: "src/sum.ts",
    base_hash: baseHash,
    before: "a - b",
    after: "a + b",
  });
  const propose = async (tool: string, args: Record<string, unknown>, session: string, execute = false) =>
    onlyOutcome(
      await gw.propose(alice, { format: "canonical", payload: canonicalCall(tool, args), session, execute }),
    );
  const codes = (outcome: Outcome) => outcome.reasons.map((r) => r.code);
  const loggedHistory = async (outcome: Outcome) =>
    loggedInputSchema.parse((await gw.gateway.log.get(outcome.decision_id))?.input).context.history;

  it("refuses an edit read_first until this session read the file, and records what it decided on", async () => {
    const fresh = await propose("repo.propose_edit", edit(), "s1");
    expect(fresh.decision).toBe("deny");
    expect(codes(fresh)).toEqual(["read_first"]);
    // refunded_today is per subject: it applies to every call of alice's.
    expect(await loggedHistory(fresh)).toEqual({
      reads_of_path: { count: 0 },
      refunded_today: { count: 0, sum: 0 },
    });

    const read = await propose("repo.read", { workspace: WS, path: "src/sum.ts" }, "s1", true);
    expect(read.decision).toBe("allow");
    const after = await propose("repo.propose_edit", edit(), "s1");
    expect(codes(after)).not.toContain("read_first");
    expect(after.decision).toBe("allow");
    expect(await loggedHistory(after)).toMatchObject({
      reads_of_path: { count: 1, last: { time_ns: expect.any(Number), decision_id: read.decision_id } },
    });

    const other = await propose("repo.propose_edit", edit(), "s2");
    expect(codes(other)).toEqual(["read_first"]);
  });

  it("sums the refunds that ran today and refuses one that would pass the daily total", async () => {
    const refund = (amount: number, execute = true) =>
      propose("payments.refund", { workspace: WS, summary: "refund", amount }, "r1", execute);
    const decidedOnly = await refund(400, false);
    expect(decidedOnly.decision).toBe("allow");
    const first = await refund(300);
    expect(first.decision).toBe("allow");
    expect(first.result).toBeDefined();
    expect(await loggedHistory(first)).toEqual({ refunded_today: { count: 0, sum: 0 } });
    expect((await refund(150)).decision).toBe("allow");
    const over = await refund(100);
    expect(over.decision).toBe("deny");
    expect(codes(over)).toEqual(["daily_refund_total"]);
    expect(await loggedHistory(over)).toMatchObject({ refunded_today: { count: 2, sum: 450 } });
  });

  it("denies, without asking the policy, when the facts cannot be read from the store", async () => {
    const file = z.object({ location: z.string() }).parse(gw.gateway.store).location;
    const db = new Database(file);
    try {
      db.exec("DROP TABLE history_buckets");
    } finally {
      db.close();
    }
    const refused = await propose("repo.propose_edit", edit(), "s1");
    expect(refused.decision).toBe("deny");
    expect(codes(refused)).toEqual(["history_unavailable"]);
    const entry = await gw.gateway.log.get(refused.decision_id);
    expect(entry?.error).toBe("history_unavailable");
    expect(entry?.result).toBeUndefined();
    expect(entry?.reasons.find((r) => !r.visible_to_model)?.message).toMatch(
      /could not be read from the store/,
    );
  });
});
