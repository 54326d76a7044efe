/**
 * Stage 5's first step, history (issue 33, src/history/): the facts whose keys apply to the call
 * read from the store into `input.context.history` before the policy runs. A call no fact applies
 * to costs a lookup and nothing else (no store round trip, no await). When the facts cannot be
 * read, the call is denied without asking the policy (fail closed): the failure is the entry's
 * `history_unavailable` error and reason.
 */

import { z } from "zod";
import type { Gateway } from "../core/gateway.ts";
import type {
  CanonicalAction,
  HistoryValue,
  PolicyDecision,
  PolicyInput,
  ResourceRef,
  Subject,
} from "../core/types.ts";
import { type AppliedFact, type HistoryCall, NO_FACTS } from "../history/index.ts";
import { PolicyFailure } from "../policy/index.ts";
import type { HistoryCount } from "../store/types.ts";
import type { Evaluation } from "./05-decide.ts";

/** The history a call was decided on. */
export interface HistoryRead {
  call: HistoryCall;
  applied: readonly AppliedFact[];
  /** `input.context.history` (undefined when no fact applies, or when the read failed). */
  values: Record<string, HistoryValue> | undefined;
  /** Why the facts could not be read: the call is denied. */
  failure: PolicyFailure | undefined;
}

/** The parts of a call facts are keyed by. */
export function historyCall(
  subject: Subject,
  action: CanonicalAction,
  resource: ResourceRef | undefined,
  context: { session?: string | undefined; run?: { id: string } | undefined },
): HistoryCall {
  return { subject, action, session: context.session, run: context.run?.id, resource };
}

/** Reads the facts that apply to `call`; synchronous when none does. */
export function readHistory(
  gw: Pick<Gateway, "history" | "store" | "now">,
  call: HistoryCall,
): HistoryRead | Promise<HistoryRead> {
  const applied = gw.history?.applicable(call) ?? NO_FACTS;
  if (gw.history === undefined || applied.length === 0)
    return { call, applied, values: undefined, failure: undefined };
  return gw.history.read(gw.store, applied, gw.now?.() ?? new Date()).then(
    (values) => ({ call, applied, values, failure: undefined }),
    (error: unknown) => ({
      call,
      applied,
      values: undefined,
      failure: new PolicyFailure(
        "history_unavailable",
        `the history facts (${applied.map((a) => a.fact.name).join(", ")}) could not be read from the store, so the call is denied: ${error instanceof Error ? error.message : String(error)}. Check the store's health (writ status, /healthz) and retry`,
      ),
    }),
  );
}

/** What the call's entry counts in, for its final decision (none when the read failed). */
export function historyCounts(
  gw: Pick<Gateway, "history">,
  read: HistoryRead | undefined,
  decision: Parameters<NonNullable<Gateway["history"]>["counts"]>[2],
): { history?: readonly HistoryCount[] } {
  if (gw.history === undefined || read === undefined || read.applied.length === 0 || read.failure) return {};
  const counts = gw.history.counts(read.applied, read.call, decision);
  return counts === undefined ? {} : { history: counts };
}

/** The fail-closed deny of a call whose facts could not be read: the policy is not asked. */
export function historyDenied(
  gw: Pick<Gateway, "policy" | "metrics">,
  input: PolicyInput,
  failure: PolicyFailure,
): Evaluation {
  gw.metrics.policyFailures.inc({ reason: failure.code });
  const decision: PolicyDecision = {
    decision: "deny",
    reasons: [
      { code: failure.code, message: failure.message, visible_to_model: false },
      {
        code: failure.code,
        message: "the history this call is decided on could not be read, so it is denied; retry later",
        visible_to_model: true,
      },
    ],
    conditions: [],
  };
  return { input, decision, revision: gw.policy.revision ?? "none", failure, evalNs: 0 };
}

const decidedContextSchema = z.object({
  context: z.object({
    session: z.string().optional(),
    run: z.object({ id: z.string() }).optional(),
  }),
});

/**
 * What the `writ/execute` entry of a call that ran counts in (facts with `executed: true`): keyed
 * by the call as it ran, with the session and run of the decision its grant came from (read from
 * that decision's entry, from any instance). None when no such fact names the tool; when the
 * decision's entry cannot be read the execution is logged uncounted (it ran: its entry must be
 * written).
 */
export async function executionCounts(
  gw: Pick<Gateway, "history" | "log">,
  call: { subject: Subject; action: CanonicalAction; resource: ResourceRef | undefined },
  decisionId: string,
): Promise<{ history?: readonly HistoryCount[] }> {
  const history = gw.history;
  if (history === undefined || !history.countsExecutionsOf(call.action.name)) return {};
  const entry = await gw.log.get(decisionId).catch(() => undefined);
  const decided = decidedContextSchema.safeParse(entry?.input);
  if (!decided.success) return {};
  const counts = history.executedCounts({
    ...call,
    session: decided.data.context.session,
    run: decided.data.context.run?.id,
  });
  return counts === undefined ? {} : { history: counts };
}
