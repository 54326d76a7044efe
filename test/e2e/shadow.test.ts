/**
 * Shadow mode (issue 19): a candidate policy that tightens one rule decides every call beside the
 * live one. The answers are the live policy's; each disagreement is a `writ/shadow` entry linked
 * to the live decision, and /metrics counts agreements and disagreements.
 */
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { canonicalCall, type LogEntry, logEntries, onlyOutcome, README_ARGS, WS } from "./api.ts";

let gw: TestGateway;
let alice: string;
let reviewer: string;

/** The candidate: the sample policy, with reads of README files refused. */
const TIGHTENED = `

denials contains reason("readme_closed", "README files are not to be read") if {
	input.action.name == "repo.read"
	contains(args.path, "README")
}
`;

beforeAll(async () => {
  gw = await startTestGateway({
    configure: (document, tmp) => {
      // The candidate: a copy of the sample policies (startTestGateway put them in tmp/policies).
      const candidate = path.join(tmp, "candidate");
      cpSync(path.join(tmp, "policies"), candidate, { recursive: true });
      const file = path.join(candidate, "writ", "decision.rego");
      writeFileSync(file, readFileSync(file, "utf8") + TIGHTENED);
      const policy = z.record(z.string(), z.unknown()).parse(document.policy);
      return { ...document, policy: { ...policy, shadow: { dir: candidate, watch: false } } };
    },
  });
  alice = await gw.token("alice");
  reviewer = await gw.token("rita", { roles: ["reviewer"] });
}, 60_000);

afterAll(async () => {
  await gw?.close();
});

async function shadowEntries(): Promise<LogEntry[]> {
  return logEntries(gw, { path: "writ/shadow" });
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("a shadow policy", () => {
  it("changes no answer and records exactly the decisions it would change, linked to the live ones", async () => {
    const readme = onlyOutcome(
      await gw.propose(alice, { format: "canonical", payload: canonicalCall("repo_read", README_ARGS) }),
    );
    const source = onlyOutcome(
      await gw.propose(alice, {
        format: "canonical",
        payload: canonicalCall("repo_read", { workspace: WS, path: "src/sum.ts" }),
      }),
    );
    // The live policy allows both: the candidate's refusal reaches no caller.
    expect(readme, JSON.stringify(readme)).toMatchObject({ decision: "allow" });
    expect(readme.grant).toBeDefined();
    expect(source.decision).toBe("allow");

    const entries = await eventually(shadowEntries, (e) => e.length >= 1);
    expect(entries).toHaveLength(1);
    const [disagreement] = entries;
    expect(disagreement).toMatchObject({
      path: "writ/shadow",
      decision: "deny",
      subject: "alice",
      action: "repo.read",
      input: { live_decision_id: readme.decision_id, live: { decision: "allow", reasons: [] } },
    });
    expect(disagreement?.reasons.map((r) => r.code)).toContain("readme_closed");
    // The live entry is untouched: allow, under the live revision, with its grant.
    const live = await gw.gateway.log.get(readme.decision_id);
    expect(live).toMatchObject({ decision: "allow", path: "writ/decision" });
    expect(disagreement?.bundles.writ.revision).not.toBe(live?.bundles.writ.revision);

    // Reviewers list them over the API by path.
    const listed = await gw.request("GET", "/v1/decisions?path=writ/shadow", { token: reviewer });
    expect(listed.status).toBe(200);
    expect(
      z.object({ entries: z.array(z.object({ decision_id: z.string() })) }).parse(listed.json).entries,
    ).toHaveLength(1);

    const metrics = (await gw.request("GET", "/metrics")).text;
    expect(metrics).toMatch(/^writ_shadow_decisions_total\{outcome="disagree"\} 1$/m);
    expect(metrics).toMatch(/^writ_shadow_decisions_total\{outcome="agree"\} [1-9]\d*$/m);
  });
});
