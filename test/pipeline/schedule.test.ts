/**
 * Scheduling by side effect (src/pipeline/schedule.ts) through handleProposal: read-only calls
 * of one proposal run side by side (never more than the bound), calls with side effects run
 * alone and in order, so a read after a write sees it; outcomes keep the proposal's order.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/core/gateway.ts";
import { handleProposal } from "../../src/pipeline/index.ts";
import { createScheduling } from "../../src/schedule/index.ts";
import { ALLOW_ALL_POLICY } from "../support/counting-backend.ts";
import { type UnitGateway, unitGateway } from "./harness.ts";
import { type Recorder, recorder, scheduledGateway, spanOf } from "./schedule-harness.ts";

let u: UnitGateway;
let rec: Recorder;
let gw: Gateway;
beforeEach(async () => {
  u = await unitGateway({ policy: ALLOW_ALL_POLICY });
  rec = recorder(40);
  gw = scheduledGateway(u, rec);
});
afterEach(async () => {
  await u.close();
});

async function propose(gateway: Gateway, tools: string[], execute = true) {
  return handleProposal(gateway, {
    authorization: await u.bearer("alice"),
    format: "canonical",
    payload: { calls: tools.map((tool, i) => ({ tool, arguments: { note: `n${i}` } })) },
    execute,
    requestId: "r-schedule",
  });
}

describe("a proposal's calls", () => {
  it("run side by side when read-only, alone and in order when they have side effects", async () => {
    const tools = ["read", "read", "draft", "read", "read", "commit", "read"];
    const outcomes = await propose(gw, tools);
    expect(outcomes.map((o) => [o.call_id, o.decision, o.error])).toEqual(
      tools.map((_, i) => [`call-${i}`, "allow", undefined]),
    );
    expect(outcomes.map((o) => o.result?.structured_content.note)).toEqual(tools.map((_, i) => `n${i}`));
    // Calls 0, 1, 3, 4 and 6 read; 2 drafts (reversible) and 5 commits.
    const at = (i: number) => spanOf(rec, i);
    // The reads next to each other overlap in time.
    expect(at(1).start).toBeLessThan(at(0).end);
    expect(at(4).start).toBeLessThan(at(3).end);
    // A call with side effects starts after every earlier call ended, and the later ones after it.
    expect(at(2).start).toBeGreaterThanOrEqual(Math.max(at(0).end, at(1).end));
    expect(Math.min(at(3).start, at(4).start)).toBeGreaterThanOrEqual(at(2).end);
    expect(at(5).start).toBeGreaterThanOrEqual(Math.max(at(3).end, at(4).end));
    expect(at(6).start).toBeGreaterThanOrEqual(at(5).end);
    const metrics = await gw.metrics.render();
    expect(metrics).toContain('writ_scheduled_calls_total{schedule="concurrent"} 5');
    expect(metrics).toContain('writ_scheduled_calls_total{schedule="ordered"} 2');
    expect(metrics).toContain('writ_proposal_concurrent_calls_bucket{le="2"} 1');
  });

  it("never run more read-only calls at once than the bound", async () => {
    const bounded = {
      ...gw,
      scheduling: { ...createScheduling(schedulingDefaults(), gw), maxConcurrentReads: 3 },
    };
    const outcomes = await propose(
      bounded,
      Array.from({ length: 10 }, () => "read"),
    );
    expect(outcomes.every((o) => o.decision === "allow" && o.result !== undefined)).toBe(true);
    expect(rec.peak).toBe(3);
  });

  it("see the writes before them: a read after a write reads what it wrote", async () => {
    const outcomes = await propose(gw, ["read", "draft", "read", "commit", "read"]);
    // Each handler answers with the last write it saw (the draft and commit write their note).
    expect(outcomes.map((o) => o.result?.structured_content.seen)).toEqual([null, null, "n1", "n1", "n3"]);
  });

  it("refused before the policy count as no side effect, and keep their place", async () => {
    const outcomes = await propose(gw, ["read", "nope", "read"]);
    expect(outcomes.map((o) => o.decision)).toEqual(["allow", "error", "allow"]);
    expect(outcomes[1]?.error?.category).toBe("unknown_tool");
    expect(spanOf(rec, 2).start).toBeLessThan(spanOf(rec, 0).end);
  });

  it("are decided in the same order without execute, and nothing runs", async () => {
    const outcomes = await propose(gw, ["read", "commit", "read"], false);
    expect(outcomes.map((o) => [o.call_id, o.decision])).toEqual([
      ["call-0", "allow"],
      ["call-1", "allow"],
      ["call-2", "allow"],
    ]);
    expect(rec.spans).toHaveLength(0);
    expect((await u.entries()).map((e) => e.decision)).toEqual(["allow", "allow", "allow"]);
  });
});

function schedulingDefaults() {
  return { max_concurrent_reads: 4, group_max_wait_ms: 30_000, group_lease_ms: 15_000 };
}
