/**
 * A Code Mode run's own decision (`code.run`) is decided and logged like any call
 * (src/pipeline/decide-and-log.ts): its limits apply, and a shadow policy sees it. Against an
 * in-memory store and the unit policy (test/pipeline/harness.ts), which denies `code.run` unless
 * the policy below allows it.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCode } from "../../src/codemode/run.ts";
import { SandboxPool } from "../../src/codemode/sandbox.ts";
import { WritError } from "../../src/core/errors.ts";
import { PolicyEngine } from "../../src/policy/engine.ts";
import { type Disagreement, ShadowPolicy } from "../../src/policy/shadow.ts";
import { POLICY, type UnitGateway, unitGateway } from "../pipeline/harness.ts";

/** The unit policy, and `code.run` allowed. */
const RUNS_ALLOWED = `${POLICY}
decision := {"decision": "allow", "reasons": [], "conditions": []} if input.action.name == "code.run"
`;

/** A candidate that denies everything. */
const DENY_ALL = `package writ

import rego.v1

decision := {"decision": "deny", "reasons": [{"code": "candidate", "message": "no", "visible_to_model": true}], "conditions": []}
`;

let u: UnitGateway | undefined;
let pool: SandboxPool | undefined;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await pool?.close();
  pool = undefined;
  await u?.close();
  u = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function run(g: UnitGateway, requestId: string, admit?: () => (() => void) | WritError) {
  pool ??= new SandboxPool(1);
  return runCode(g.gw, {
    subject: g.subject("alice", ["dev"]),
    code: "return 1 + 1",
    requestId,
    tools: [],
    limits: {},
    pool,
    ...(admit === undefined ? {} : { admit }),
  });
}

describe("a Code Mode run's decision", () => {
  it("is charged to the limits that apply to it: over one, the run is refused rate_limited, on the log", async () => {
    u = await unitGateway({ policy: RUNS_ALLOWED, limits: [{ name: "runs", calls: 1, window_s: 3600 }] });
    const first = await run(u, "r1");
    expect(first.body).toMatchObject({ outcome: "returned", value: 2 });
    const second = await run(u, "r2");
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ outcome: "refused", error: { category: "rate_limited" } });
    const runs = (await u.entries()).filter((e) => e.action === "code.run");
    expect(runs.map((e) => [e.decision, e.error])).toEqual([
      ["allow", null],
      ["deny", "rate_limited"],
    ]);
    // The policy saw the limit's usage, as for any call.
    expect(runs[1]?.input).toMatchObject({ context: { usage: { runs: expect.any(Object) } } });
  });

  it("is not charged to its limits when the caller's cap on runs at once refuses it", async () => {
    u = await unitGateway({ policy: RUNS_ALLOWED, limits: [{ name: "runs", calls: 2, window_s: 3600 }] });
    const cap = new WritError(
      "rate_limited",
      "alice has 1 program running, the most one caller may run at once",
      {
        suggestedFix: "wait for a run to end",
      },
    );
    const capped = await run(u, "r0", () => cap);
    expect(capped.status).toBe(429);
    expect(capped.body).toMatchObject({ outcome: "refused", error: { category: "rate_limited" } });
    // Both runs the limit allows still run: the refused one took nothing from it.
    expect((await run(u, "r1")).body).toMatchObject({ outcome: "returned", value: 2 });
    expect((await run(u, "r2")).body).toMatchObject({ outcome: "returned", value: 2 });
    const runs = (await u.entries()).filter((e) => e.action === "code.run");
    expect(runs.map((e) => [e.decision, e.error])).toEqual([
      ["deny", "rate_limited"],
      ["allow", null],
      ["allow", null],
    ]);
  });

  it("gives back the caller's slot when the policy does not allow the run", async () => {
    u = await unitGateway({ policy: POLICY });
    let released = 0;
    const denied = await run(u, "r1", () => () => {
      released += 1;
    });
    expect(denied.body).toMatchObject({ outcome: "refused", error: { category: "policy_denied" } });
    expect(released).toBe(1);
  });

  it("is seen by a shadow policy, which records its disagreement", async () => {
    u = await unitGateway({ policy: RUNS_ALLOWED });
    const dir = await mkdtemp(path.join(os.tmpdir(), "writ-shadow-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(path.join(dir, "decision.rego"), DENY_ALL);
    const candidate = new PolicyEngine();
    await candidate.loadDirectory(dir);
    const seen: Disagreement[] = [];
    const counted: string[] = [];
    const shadow = new ShadowPolicy(
      candidate,
      async (d) => {
        seen.push(d);
      },
      { shadowDecisions: { inc: ({ outcome }) => counted.push(outcome) }, shadowDropped: { inc: () => {} } },
    );
    u.gw.shadow = shadow;
    const answer = await run(u, "r1");
    expect(answer.body.outcome).toBe("returned");
    await shadow.flush();
    expect(counted).toEqual(["disagree"]);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.input.action.name).toBe("code.run");
    expect(seen[0]?.live).toMatchObject({
      decisionId: answer.body.run.decision_id,
      decision: { decision: "allow" },
    });
    expect(seen[0]?.shadow.decision.decision).toBe("deny");
  });
});
