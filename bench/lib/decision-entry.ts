/** The decision-log entry benchmarks write: an allowed `repo.read` of README.md by alice (tenant demo). */
import { randomUUID } from "node:crypto";
import type { NewDecisionEntry } from "../../src/store/types.ts";
import { policyInputFor } from "../../test/policy/inputs.ts";

export const BENCH_READ_ARGS = { workspace: "ws-demo", path: "README.md" };

/** The entry of the benched call decided at `at` (ms), with its id and session, if any. */
export function benchEntry(at: number, options: { id?: string; session?: string } = {}): NewDecisionEntry {
  return {
    decision_id: options.id ?? randomUUID(),
    timestamp: new Date(at).toISOString(),
    path: "writ/decision",
    input: policyInputFor("repo.read", {
      subject: { tenant: "demo", roles: ["developer"] },
      args: BENCH_READ_ARGS,
      context: {
        time_ns: at * 1_000_000,
        request_id: "bench",
        source: "canonical",
        ...(options.session === undefined ? {} : { session: options.session }),
        phase: "call",
      },
    }),
    result: { decision: "allow", reasons: [], conditions: [] },
    bundles: { writ: { revision: "bench" } },
    metrics: { timer_rego_query_eval_ns: 50_000 },
    erased: [],
    masked: [],
    subject: "alice",
    tenant: "demo",
    action: "repo.read",
    resource: { type: "workspace", id: "ws-demo" },
    decision: "allow",
    reasons: [],
    error: null,
    grant_jti: randomUUID(),
    approval_id: null,
    conditions: [],
    request_id: "bench",
  };
}
