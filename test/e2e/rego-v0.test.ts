/**
 * A gateway on Rego v0 policies: `policy.rego_version: 0` compiles the policy folder as Rego v0
 * (as `opa … --v0-compatible` reads it), and the shadow folder takes the same version unless
 * `policy.shadow.rego_version` says otherwise.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { canonicalCall, logEntries, onlyOutcome, README_ARGS } from "./api.ts";

/** Rego v0: bodies without `if`, a partial set rule `p[x] { … }`. */
const live = `package writ

default decision = {"decision": "deny", "reasons": [], "conditions": []}

decision = {"decision": "allow", "reasons": [], "conditions": []} {
  readers[input.subject.id]
}

readers[name] {
  name := ["alice", "bob"][_]
}
`;

const candidate = `package writ

default decision = {"decision": "allow", "reasons": [], "conditions": []}

decision = {"decision": "deny", "reasons": [reason], "conditions": []} {
  input.action.name == "repo.read"
  reason := {"code": "v0_candidate", "message": "the candidate refuses reads", "visible_to_model": true}
}
`;

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    configure: (document, tmp) => {
      const folders = {
        live: path.join(tmp, "v0-live", "writ"),
        candidate: path.join(tmp, "v0-candidate", "writ"),
      };
      mkdirSync(folders.live, { recursive: true });
      mkdirSync(folders.candidate, { recursive: true });
      writeFileSync(path.join(folders.live, "decision.rego"), live);
      writeFileSync(path.join(folders.candidate, "decision.rego"), candidate);
      const policy = z.record(z.string(), z.unknown()).parse(document.policy);
      return {
        ...document,
        policy: {
          ...policy,
          dir: path.dirname(folders.live),
          rego_version: 0,
          watch: false,
          shadow: { dir: path.dirname(folders.candidate), watch: false },
        },
      };
    },
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
});

describe("policy.rego_version: 0", () => {
  it("decides with the Rego v0 policy, and shadows it with a Rego v0 candidate", async () => {
    const allowed = onlyOutcome(
      await gw.propose(await gw.token("alice"), {
        format: "canonical",
        payload: canonicalCall("repo_read", README_ARGS),
      }),
    );
    expect(allowed.decision).toBe("allow");
    const denied = onlyOutcome(
      await gw.propose(await gw.token("mallory"), {
        format: "canonical",
        payload: canonicalCall("repo_read", README_ARGS),
      }),
    );
    expect(denied.decision).toBe("deny");

    const deadline = Date.now() + 10_000;
    let shadowed = await logEntries(gw, { path: "writ/shadow" });
    while (shadowed.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      shadowed = await logEntries(gw, { path: "writ/shadow" });
    }
    expect(shadowed.map((e) => [e.decision, e.input])).toEqual([
      ["deny", expect.objectContaining({ live_decision_id: allowed.decision_id })],
    ]);
    expect(shadowed[0]?.reasons.map((r) => r.code)).toEqual(["v0_candidate"]);
  });
});
