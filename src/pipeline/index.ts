/**
 * The pipeline (DESIGN section 1): every tool call walks these stages, in this order; each stage
 * is one module of this folder.
 *
 *    1. intake     — 01-intake:    the provider's payload to proposed calls
 *    2. normalize  — 02-normalize: contract, validated arguments, resource, args digest
 *    3. identity   — 03-identity:  the caller's bearer JWT to a subject, once per request
 *    4. resource   — 04-resource:  ownership and revision from the store
 *    5. decide     — 05-history:   the history facts that apply read into the input (fail closed)
 *                    05-decide:    the policy input, evaluated, failing closed
 *    6. approval   — 06-approval:  require_approval stores a request; the caller waits
 *    7. grant      — 07-grant:     allow gets a signed, single-use grant bound to the call
 *    8. log        — 08-log:       the decision is durable before the answer leaves
 *    9. dispatch   — 09-dispatch:  (with execute) the grant verified and consumed, the backend run
 *   10. result     — 10-result:    the layered result of DESIGN section 7
 *
 * The log entry is written before dispatch so that no grant exists without its entry.
 * A proposal's calls walk stages 4–10 in the order of `schedule.ts`: read-only calls side by side,
 * calls with side effects alone and in order; calls of one `concurrency_group` take turns at
 * dispatch (src/schedule/groups.ts).
 *
 * Each stage call goes through `stage()` (src/observability/tracing.ts): a child span of the
 * request's when OpenTelemetry traces the request, the call itself otherwise.
 */
import { WritError } from "../core/errors.ts";
import type {
  ApprovalView,
  CallOutcome,
  ExecuteRequest,
  Gateway,
  IssuedGrantView,
  ProposalRequest,
} from "../core/gateway.ts";
import { timeOrderedUuid } from "../core/ids.ts";
import type { ProposedCall, Subject } from "../core/types.ts";
import { refusalEntry } from "../decisionlog/index.ts";
import { scopeChallenge } from "../discovery/index.ts";
import type { NormalizedCall } from "../normalize/index.ts";
import { type CallAttributes, stage, subjectAttributes, tracedCall } from "../observability/tracing.ts";
import { type LayeredResult, ToolFailedError } from "../results/index.ts";
import { schedulingOf } from "../schedule/index.ts";
import { intake } from "./01-intake.ts";
import { normalizeCalls } from "./02-normalize.ts";
import { identify } from "./03-identity.ts";
import { allows, denial, visible } from "./05-decide.ts";
import { approvalRequired, requestApproval } from "./06-approval.ts";
import { type IssuedGrant, issueGrantWithClaims } from "./07-grant.ts";
import { currentRevision, logDecision } from "./08-log.ts";
import { type Decision, decideAndLog, type Settled } from "./decide-and-log.ts";
import { executeGranted, suggestedTo } from "./execute.ts";
import { runScheduled } from "./schedule.ts";

export { type DiscoveredTool, ToolDiscovery, toolDiscovery } from "../discovery/index.ts";
export { logRefusedRequest } from "./03-identity.ts";
export { executorOf, type GrantIssue, issueGrant } from "./07-grant.ts";
export { type DecideRequest, type Decision, decideAndLog, type Settled } from "./decide-and-log.ts";
export { executeGranted, executeWithGrant, type GrantedCall } from "./execute.ts";
export type {
  ApprovalView,
  CallOutcome,
  ExecuteRequest,
  Gateway,
  IssuedGrantView,
  LayeredResult,
  ProposalRequest,
};

/**
 * Decides every call of a proposal. Throws WritError only when the whole request is refused
 * (malformed payload, unauthenticated); each such refusal is logged first.
 */
export async function handleProposal(gw: Gateway, req: ProposalRequest): Promise<CallOutcome[]> {
  const calls = await stage("intake", undefined, () => intake(gw, req)); // 1
  const normalized = stage("normalize", undefined, () => normalizeCalls(gw.contracts, calls)); // 2
  const subject = await stage(
    "identity",
    undefined,
    () => identify(gw, req, calls, normalized),
    subjectAttributes,
  ); // 3
  const decideOne = async (i: number): Promise<CallOutcome> => {
    const call = calls[i]!;
    const n = normalized[i]!;
    const callStarted = performance.now();
    const outcome =
      n instanceof WritError
        ? await refuseCall(gw, req, call, subject, n)
        : await decideCall(gw, { req, call, subject, n });
    gw.metrics.decisions.inc({ decision: outcome.decision });
    gw.metrics.decisionSeconds.observe((performance.now() - callStarted) / 1000);
    return outcome;
  };
  if (calls.length <= 1) return calls.length === 0 ? [] : [await decideOne(0)];
  // Read-only calls side by side (bounded), calls with side effects alone and in order (4–10).
  const { results, stats } = await runScheduled(
    {
      count: calls.length,
      // A call that did not normalize is refused without running: it has no side effect.
      readOnly: (i) => {
        const n = normalized[i]!;
        return n instanceof WritError || n.contract.side_effect === "none";
      },
      group: (i) => {
        const n = normalized[i]!;
        return n instanceof WritError ? undefined : n.contract.concurrency_group;
      },
      limit: schedulingOf(gw).maxConcurrentReads,
    },
    decideOne,
  );
  gw.metrics.scheduledCalls.inc({ schedule: "concurrent" }, stats.concurrent);
  gw.metrics.scheduledCalls.inc({ schedule: "ordered" }, stats.ordered);
  gw.metrics.concurrentCalls.observe(stats.peak);
  return results;
}

/** One well-formed call of an authenticated caller, as the proposal's stages 4–10 take it. */
interface CallToDecide {
  req: ProposalRequest;
  call: ProposedCall;
  subject: Subject;
  n: NormalizedCall;
}

/**
 * Stages 4–10 for one well-formed call. A call run at once on an in-process backend takes its
 * resource's turn first (src/schedule/resource-turns.ts): it is decided on the revision it runs
 * on, whatever another such call on the resource changed.
 */
async function decideCall(gw: Gateway, c: CallToDecide): Promise<CallOutcome> {
  const { req, n } = c;
  if (!req.execute || n.resource === undefined || n.contract.backend.kind !== "inprocess") {
    return decideAndRun(gw, c);
  }
  const release = await schedulingOf(gw).resources.enter(`${n.resource.type}\u0000${n.resource.id}`);
  try {
    return await decideAndRun(gw, c);
  } finally {
    release();
  }
}

/** Stages 4–8 (`decideAndLog`, which asks `settleCall` for 6 and 7), then with `execute` 9–10. */
async function decideAndRun(gw: Gateway, c: CallToDecide): Promise<CallOutcome> {
  const { req, call, subject, n } = c;
  const decisionId = timeOrderedUuid();
  const traced = tracedCall(subject, n.action.name, decisionId);
  const decided = await decideAndLog(
    gw,
    {
      subject,
      action: n.action,
      resource: n.resource,
      context: { requestId: req.requestId, source: call.source, session: req.session, run: req.run },
      limits: "charge",
      decisionId,
      traced,
    },
    (d) => settleCall(gw, c, d, traced), // 6–7
  );
  const { outcome, grant, policyRevision } = decided;
  if (!req.execute || grant === undefined) return outcome;
  try {
    outcome.result = await executeGranted(gw, {
      n,
      tool: call.tool,
      subject,
      token: grant.view.token,
      issued: grant.claims,
      requestId: req.requestId,
      policyRevision,
      traced,
      ...(req.observer ? { observer: req.observer } : {}),
    }); // 9–10
  } catch (e) {
    outcome.error = WritError.from(e).toJSON();
    if (e instanceof ToolFailedError) outcome.result = e.result;
  }
  return outcome;
}

/** A decided call's outcome, and the grant it runs with. */
interface DecidedCall {
  outcome: CallOutcome;
  grant: IssuedGrant | undefined;
  policyRevision: string;
}

/** Stages 6 and 7: `require_approval` stores a request, an allow gets its grant, else the refusal. */
async function settleCall(
  gw: Gateway,
  { req, call, subject, n }: CallToDecide,
  { decisionId, evaluation, resource, stored }: Decision,
  traced: CallAttributes | undefined,
): Promise<Settled<DecidedCall>> {
  const { decision, revision: policyRevision } = evaluation;
  let grant: IssuedGrant | undefined;
  let approval: ApprovalView | undefined;
  let error: WritError | undefined;
  if (decision.decision === "require_approval") {
    const parts = {
      subject,
      call,
      normalized: n,
      resourceRevision: stored?.revision ?? null,
      decision,
      decisionId,
      policyRevision,
      session: req.session ?? null,
    };
    // The same call proposed again gets its open request back; the entry names it.
    approval = await stage("approval", traced, () => requestApproval(gw, parts)); // 6
    error = approvalRequired(approval);
  } else if (allows(decision)) {
    const { contract, action } = n;
    const issue = {
      subject,
      contract,
      action,
      resource: n.resource,
      resourceRevision: resource.revision,
      decision,
      decisionId,
      policyRevision,
    };
    grant = await stage("grant", traced, () => issueGrantWithClaims(gw, issue)); // 7
  } else {
    const challenge = scopeChallenge(gw, subject, n.contract, call.source, decision);
    error = evaluation.overruled?.error ?? denial(decision, challenge);
  }
  const outcome: CallOutcome = {
    call_id: call.callId,
    tool: call.tool,
    decision: decision.decision,
    reasons: visible(decision.reasons),
    decision_id: decisionId,
    ...(grant ? { grant: grant.view } : {}),
    ...(approval ? { approval } : {}),
    ...(error ? { error: error.toJSON() } : {}),
  };
  return {
    value: { outcome, grant, policyRevision },
    grantJti: grant?.view.jti ?? null,
    approvalId: approval?.id ?? null,
  };
}

/** A call that did not normalize: refused without the policy, logged like any decision. */
async function refuseCall(
  gw: Gateway,
  req: ProposalRequest,
  call: ProposedCall,
  subject: Subject,
  refusal: WritError,
): Promise<CallOutcome> {
  const error = suggestedTo(gw, subject, refusal);
  const traced = tracedCall(subject, null, undefined);
  const entry = await stage(
    "log",
    traced,
    () =>
      logDecision(
        gw,
        refusalEntry({
          input: {
            tool: call.tool,
            source: call.source,
            arguments: call.arguments,
            session: req.session ?? null,
            ...(req.run ? { run: req.run } : {}),
          },
          policyRevision: currentRevision(gw),
          subject,
          action: null,
          resource: null,
          error,
          requestId: req.requestId,
        }),
      ),
    (logged) => ({ "writ.decision": "error", "writ.decision_id": logged.decision_id }),
  );
  return {
    call_id: call.callId,
    tool: call.tool,
    decision: "error",
    reasons: [],
    decision_id: entry.decision_id,
    error: error.toJSON(),
  };
}
