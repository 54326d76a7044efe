/**
 * Policy evaluation in the gateway (issue 27), over HTTP: with the default configuration's
 * strict builtin errors, a builtin the caller makes fail denies the call and the entry names the
 * builtin (where it was silently undefined, and the call allowed); a policy that runs for hours
 * is stopped at its budget, the call denied, and the next calls are decided again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { reloadWith } from "../support/policies.ts";
import { canonicalCall, logEntry, onlyOutcome, README_ARGS, WS } from "./api.ts";

let gw: TestGateway;
let alice: string;

beforeAll(async () => {
  gw = await startTestGateway();
  alice = await gw.token("alice");
}, 60_000);

afterAll(async () => {
  await gw?.close();
});

const propose = async (tool: string, args: Record<string, unknown>) =>
  onlyOutcome(
    await gw.propose(alice, { format: "canonical", payload: canonicalCall(tool, args), execute: true }),
  );

describe("policy evaluation", () => {
  it("a builtin the caller makes fail denies the call, and its entry names the builtin", async () => {
    await reloadWith(
      gw,
      `
denials contains reason("query_blocked", "this query is not allowed") if {
	input.action.name == "repo.search"
	regex.match(args.query, "secret")
}
`,
    );
    const refused = await propose("repo.search", { workspace: WS, query: "(" });
    expect(refused.decision).toBe("deny");
    expect(refused.result).toBeUndefined();
    const entry = await logEntry(gw, refused.decision_id);
    expect(entry.reasons[0]).toMatchObject({ code: "policy_builtin_error", visible_to_model: false });
    expect(entry.reasons[0]?.message).toMatch(/the builtin regex\.match failed/);
    // A query that is a pattern is decided as written.
    expect((await propose("repo.search", { workspace: WS, query: "sum" })).decision).toBe("allow");
  });

  it("a policy running for hours is stopped at its budget, and the gateway decides on", async () => {
    await reloadWith(
      gw,
      `
endless := numbers.range(1, 100000)

denials contains reason("never", "never") if {
	input.action.name == "repo.finish"
	not discovering
	some i in endless
	some j in endless
	i * j == -1
}
`,
    );
    // Unstopped, this call would hold the event loop for hours (and this test time out).
    const stopped = await propose("repo.finish", { workspace: WS, summary: "done" });
    expect(stopped.decision).toBe("deny");
    const entry = await logEntry(gw, stopped.decision_id);
    expect(entry.reasons[0]).toMatchObject({ code: "policy_too_slow" });
    expect(entry.reasons[0]?.message).toMatch(/stopped there/);
    // The compiled policy stopped itself: nothing was replaced, the next call is decided at once.
    expect((await propose("repo.read", README_ARGS)).decision).toBe("allow");
  });
});
