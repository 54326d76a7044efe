/**
 * Concurrency groups (src/schedule/groups.ts) through the pipeline: calls of one group never
 * overlap, within a proposal and across concurrent requests; a call that waits past its bound
 * fails with a retryable `conflict` before its grant is used (logged as the execution's failure
 * on POST /v1/execute); a committing call holds the group's lease in the store, and waits for a
 * lease another instance holds until it is released or expires.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CallOutcome, Gateway } from "../../src/core/gateway.ts";
import { executeWithGrant, handleProposal } from "../../src/pipeline/index.ts";
import { createScheduling } from "../../src/schedule/index.ts";
import { type UnitGateway, unitGateway } from "../pipeline/harness.ts";
import {
  contract,
  type Recorder,
  recorder,
  type Span,
  scheduledGateway,
} from "../pipeline/schedule-harness.ts";
import { ALLOW_ALL_POLICY } from "../support/counting-backend.ts";

const GROUP_TOOLS = [
  contract("ledger_read", { concurrency_group: "ledger" }),
  contract("ledger_note", { concurrency_group: "ledger" }),
  contract("ledger_post", { side_effect: "committing", concurrency_group: "ledger", timeout_ms: 150 }),
  contract("ledger_peek", { concurrency_group: "ledger", timeout_ms: 150 }),
];

let u: UnitGateway;
let rec: Recorder;
let gw: Gateway;
beforeEach(async () => {
  u = await unitGateway({ policy: ALLOW_ALL_POLICY });
  rec = recorder(30);
  const base = scheduledGateway(u, rec, GROUP_TOOLS);
  gw = {
    ...base,
    scheduling: createScheduling(
      { max_concurrent_reads: 4, group_max_wait_ms: 5_000, group_lease_ms: 600 },
      base,
    ),
  };
});
afterEach(async () => {
  await u.close();
});

/** Proposes `calls` ([tool, note] pairs) as alice, executing them unless told otherwise. */
async function propose(calls: Array<[string, string]>, execute = true): Promise<CallOutcome[]> {
  return handleProposal(gw, {
    authorization: await u.bearer("alice"),
    format: "canonical",
    payload: { calls: calls.map(([tool, note]) => ({ tool, arguments: { note } })) },
    execute,
    requestId: `r-${calls.map(([, note]) => note).join("-")}`,
  });
}

function span(note: string): Span {
  const found = rec.spans.find((s) => s.note === note);
  if (found === undefined) throw new Error(`${note} did not run`);
  return found;
}

/** Whether no two of these spans overlap in time. */
function disjoint(spans: Span[]): boolean {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  return sorted.every((s, i) => i === 0 || s.start >= sorted[i - 1]!.end);
}

const waitUntil = async (check: () => boolean | Promise<boolean>) => {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 2));
};

describe("concurrency groups", () => {
  it("never overlap within a proposal or across concurrent requests; other reads still run beside them", async () => {
    const answers = await Promise.all([
      propose([
        ["ledger_read", "a0"],
        ["ledger_note", "a1"],
        ["read", "a2"],
      ]),
      propose([["ledger_read", "b0"]]),
      propose([
        ["ledger_note", "c0"],
        ["ledger_read", "c1"],
      ]),
    ]);
    expect(answers.flat().every((o) => o.result !== undefined)).toBe(true);
    expect(disjoint(["a0", "a1", "b0", "c0", "c1"].map(span))).toBe(true);
    // The ungrouped read of the first proposal ran beside its grouped ones.
    expect(span("a2").start).toBeLessThan(Math.max(span("a0").end, span("a1").end));
    const metrics = await gw.metrics.render();
    expect(metrics).toMatch(/writ_concurrency_group_waits_total\{group="ledger",result="ran"\} [1-9]/);
    expect(metrics).toContain('writ_concurrency_group_wait_seconds_count{group="ledger"} 5');
    expect(metrics).toContain('writ_concurrency_group_running{group="ledger"} 0');
    expect(metrics).toContain('writ_concurrency_group_waiting{group="ledger"} 0');
  });

  it("of one proposal follow each other, so that their waits do not add up against the bound", async () => {
    // Four 60 ms calls whose bound is 150 ms: side by side, the fourth would wait 180 ms for the group.
    rec = recorder(60);
    gw = { ...gw, handlers: scheduledGateway(u, rec).handlers };
    const outcomes = await propose([
      ["ledger_peek", "q0"],
      ["ledger_peek", "q1"],
      ["ledger_peek", "q2"],
      ["ledger_peek", "q3"],
      ["read", "q4"],
    ]);
    expect(outcomes.map((o) => o.error)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(disjoint(["q0", "q1", "q2", "q3"].map(span))).toBe(true);
    // The ungrouped read still ran beside them.
    expect(span("q4").start).toBeLessThan(span("q3").end);
  });

  it("fail a call that waited past its bound with a retryable conflict, before its grant is used", async () => {
    const held = rec.hold();
    const first = propose([["ledger_read", "h0"]]);
    await waitUntil(() => rec.inFlight === 1);
    expect(await gw.metrics.render()).toContain('writ_concurrency_group_running{group="ledger"} 1');

    const started = performance.now();
    const [late] = await propose([["ledger_peek", "h1"]]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(late).toMatchObject({
      decision: "allow",
      error: { category: "conflict", retryable: true, effect_committed: false },
    });
    expect(late?.error?.message).toContain("concurrency group ledger");
    expect(late?.error?.suggested_fix).toContain("retry");
    expect(late?.result).toBeUndefined();

    // On POST /v1/execute too, and the failure is the execution's log entry.
    const authorization = await u.bearer("alice");
    const call = { tool: "ledger_peek", arguments: { note: "h1" } };
    await expect(
      executeWithGrant(gw, { authorization, grant: late?.grant?.token ?? "", call, requestId: "r-exec" }),
    ).rejects.toMatchObject({ category: "conflict", retryable: true, effectCommitted: false });
    const entry = (await u.entries()).find((e) => e.request_id === "r-exec");
    expect(entry).toMatchObject({ path: "writ/execute", decision: "error", error: "conflict" });
    expect(await gw.metrics.render()).toContain(
      'writ_concurrency_group_waits_total{group="ledger",result="timed_out"} 2',
    );

    held.release();
    await first;
    // The grant was not used: once the group is free, it runs.
    const ran = await executeWithGrant(gw, {
      authorization,
      grant: late?.grant?.token ?? "",
      call,
      requestId: "r-retry",
    });
    expect(ran.result.structured_content).toMatchObject({ note: "h1" });
  });

  it("stop waiting when the caller cancels the call, which then never runs", async () => {
    const held = rec.hold();
    const first = propose([["ledger_read", "k0"]]);
    await waitUntil(() => rec.inFlight === 1);
    const cancel = new AbortController();
    const waiting = handleProposal(gw, {
      authorization: await u.bearer("alice"),
      format: "canonical",
      payload: { tool: "ledger_note", arguments: { note: "k1" } },
      execute: true,
      requestId: "r-cancelled",
      observer: { signal: cancel.signal },
    });
    await waitUntil(async () =>
      (await gw.metrics.render()).includes('writ_concurrency_group_waiting{group="ledger"} 1'),
    );
    cancel.abort();
    const [outcome] = await waiting;
    expect(outcome?.error).toMatchObject({ category: "timeout", effect_committed: false });
    expect(outcome?.error?.message).toContain("cancelled");
    held.release();
    await first;
    expect(rec.spans.map((s) => s.note)).toEqual(["k0"]);
    expect(await gw.metrics.render()).toContain(
      'writ_concurrency_group_waits_total{group="ledger",result="cancelled"} 1',
    );
  });

  it("hold the group's lease in the store while a committing call runs, renewed, and release it after", async () => {
    const held = rec.hold();
    const posting = propose([["ledger_post", "p0"]]);
    await waitUntil(() => rec.inFlight === 1);
    // Another instance cannot take the lease while the call runs, also after the lease's 600 ms:
    // it is renewed every 200 ms.
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(await u.store.claimGroupLease("ledger", "other-instance", new Date(Date.now() + 1000))).toBe(
      false,
    );
    held.release();
    expect((await posting)[0]?.result).toBeDefined();
    expect(await u.store.claimGroupLease("ledger", "other-instance", new Date(Date.now() + 1000))).toBe(true);
    await u.store.releaseGroupLease("ledger", "other-instance");
  });

  it("wait for a lease another instance holds, and take it over once it expired", async () => {
    // An instance that took the lease for 400 ms and crashed: it never renews or releases it.
    const crashedUntil = Date.now() + 400;
    expect(await u.store.claimGroupLease("ledger", "crashed-instance", new Date(crashedUntil))).toBe(true);
    const long = {
      ...gw,
      contracts: scheduledGateway(u, rec, [
        contract("ledger_post", { side_effect: "committing", concurrency_group: "ledger", timeout_ms: 3000 }),
      ]).contracts,
    };
    const [outcome] = await handleProposal(long, {
      authorization: await u.bearer("alice"),
      format: "canonical",
      payload: { tool: "ledger_post", arguments: { note: "x0" } },
      execute: true,
      requestId: "r-takeover",
    });
    expect(outcome?.result).toBeDefined();
    expect(span("x0").startedAt).toBeGreaterThanOrEqual(crashedUntil);

    // A lease that outlasts the wait: the committing call fails with the conflict, having run nothing.
    expect(await u.store.claimGroupLease("ledger", "busy-instance", new Date(Date.now() + 5000))).toBe(true);
    const [late] = await propose([["ledger_post", "x1"]]);
    expect(late?.error).toMatchObject({ category: "conflict", retryable: true, effect_committed: false });
    expect(rec.spans.some((s) => s.note === "x1")).toBe(false);
  });
});
