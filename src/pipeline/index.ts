/**
 * The pipeline (DESIGN section 1): every tool call walks these stages, in this order; each stage
 * is one module of this folder.
 *
 *    1. intake     — 01-intake:    the provider's payload to proposed calls
 *    2. normalize  — 02-normalize: contract, validated arguments, resource, args digest
 *    3. identity   — 03-identity:  the caller's bearer JWT to a subject, once per request
 *    4. resource   — 04-resource:  ownership and revision from the store
 *    5. decide     — 05-decide:    the policy input, evaluated, failing closed
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
import { randomUUID } from "node:crypto";
import { decodeJwt } from "jose";
import { WritError } from "../core/errors.ts";
import type {
  ApprovalView,
  CallOutcome,
  ExecuteRequest,
  Gateway,
  IssuedGrantView,
  ProposalRequest,
} from "../core/gateway.ts";
import type { GrantClaims, ProposedCall, Subject } from "../core/types.ts";
import {
  type ExecutedGrant,
  type ExecutionFacts,
  evaluationEntry,
  executionEntry,
  refusalEntry,
} from "../decisionlog/index.ts";
import { toolDiscovery } from "../discovery/index.ts";
import { parseProposal } from "../intake/index.ts";
import { type NormalizedCall, normalize, UnknownToolError } from "../normalize/index.ts";
import {
  type CallAttributes,
  decisionAttributes,
  stage,
  subjectAttributes,
  tracedCall,
} from "../observability/tracing.ts";
import { type LayeredResult, ToolFailedError } from "../results/index.ts";
import { schedulingOf } from "../schedule/index.ts";
import { intake } from "./01-intake.ts";
import { normalizeCalls } from "./02-normalize.ts";
import { identify } from "./03-identity.ts";
import { resourceContext } from "./04-resource.ts";
import { allows, denial, evaluateCall, policyInput, visible } from "./05-decide.ts";
import { approvalRequired, requestApproval } from "./06-approval.ts";
import { issueGrant } from "./07-grant.ts";
import { currentRevision, logDecision } from "./08-log.ts";
import { type DispatchRequest, dispatch, GrantRefusedError } from "./09-dispatch.ts";
import { result } from "./10-result.ts";
import { runScheduled } from "./schedule.ts";

export { type DiscoveredTool, ToolDiscovery, toolDiscovery } from "../discovery/index.ts";
export { logRefusedRequest } from "./03-identity.ts";
export { executorOf, type GrantIssue, issueGrant } from "./07-grant.ts";
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
        : await decideCall(gw, req, call, subject, n);
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

/**
 * Stages 4–10 for one well-formed call of an authenticated caller. A call run at once on an
 * in-process backend takes its resource's turn first (src/schedule/resource-turns.ts): it is
 * decided on the revision it runs on, whatever another such call on the resource changed.
 */
async function decideCall(
  gw: Gateway,
  req: ProposalRequest,
  call: ProposedCall,
  subject: Subject,
  n: NormalizedCall,
): Promise<CallOutcome> {
  if (!req.execute || n.resource === undefined || n.contract.backend.kind !== "inprocess") {
    return decideAndRun(gw, req, call, subject, n);
  }
  const release = await schedulingOf(gw).resources.enter(`${n.resource.type}\u0000${n.resource.id}`);
  try {
    return await decideAndRun(gw, req, call, subject, n);
  } finally {
    release();
  }
}

async function decideAndRun(
  gw: Gateway,
  req: ProposalRequest,
  call: ProposedCall,
  subject: Subject,
  n: NormalizedCall,
): Promise<CallOutcome> {
  const decisionId = randomUUID();
  const traced = tracedCall(subject, n.action.name, decisionId);
  const { context: resource, stored } = await stage("resource", traced, () =>
    resourceContext(gw.store, n.resource),
  ); // 4
  const input = policyInput(subject, n.action, resource, {
    requestId: req.requestId,
    source: call.source,
    session: req.session,
    run: req.run,
  });
  const decided = stage("decide", traced, () => evaluateCall(gw, input), decisionAttributes); // 5
  const evaluation = decided instanceof Promise ? await decided : decided;
  const { decision, revision: policyRevision } = evaluation;

  let grant: IssuedGrantView | undefined;
  let approval: ApprovalView | undefined;
  let error: WritError | undefined;
  if (decision.decision === "require_approval") {
    const session = req.session ?? null;
    const resourceRevision = stored?.revision ?? null;
    const parts = {
      subject,
      call,
      normalized: n,
      resourceRevision,
      decision,
      decisionId,
      policyRevision,
      session,
    };
    // The same call proposed again gets its open request back; the entry below names it.
    approval = await stage("approval", traced, () => requestApproval(gw, parts)); // 6
    error = approvalRequired(approval);
  } else if (allows(decision)) {
    const { contract, action } = n;
    grant = await stage("grant", traced, () =>
      issueGrant(gw, {
        subject,
        contract,
        action,
        resource: n.resource,
        resourceRevision: resource.revision,
        decision,
        decisionId,
        policyRevision,
      }),
    ); // 7
  } else {
    error = evaluation.overruled?.error ?? denial(decision);
  }

  await stage("log", traced, () =>
    logDecision(
      gw,
      evaluationEntry({
        decisionId,
        path: gw.policy.entrypoint,
        input: evaluation.input,
        evaluation,
        subject,
        action: n.action.name,
        resource: n.resource ?? null,
        requestId: req.requestId,
        grantJti: grant?.jti ?? null,
        approvalId: approval?.id ?? null,
      }),
    ),
  ); // 8
  // A shadow policy decides too, off the answer's path; its decision never reaches the caller.
  // It sees the live policy's input (with limits' usage) and is compared with its own decision.
  gw.shadow?.observe(
    evaluation.input,
    { decisionId, decision: evaluation.overruled?.policy ?? decision, revision: policyRevision },
    { subject, action: n.action.name, resource: n.resource ?? null, requestId: req.requestId },
  );

  const outcome: CallOutcome = {
    call_id: call.callId,
    tool: call.tool,
    decision: decision.decision,
    reasons: visible(decision.reasons),
    decision_id: decisionId,
    ...(grant ? { grant } : {}),
    ...(approval ? { approval } : {}),
    ...(error ? { error: error.toJSON() } : {}),
  };
  if (req.execute && grant) {
    try {
      outcome.result = await run(
        gw,
        {
          n,
          token: grant.token,
          requestId: req.requestId,
          ...(req.observer ? { observer: req.observer } : {}),
        },
        traced,
      ); // 9–10
    } catch (e) {
      const error = WritError.from(e);
      outcome.error = error.toJSON();
      if (e instanceof ToolFailedError) outcome.result = e.result;
      // A grant refused at the moment of effect (its resource moved since the decision, say) is on
      // the chain like a refused POST /v1/execute.
      if (e instanceof GrantRefusedError) {
        await stage("log", traced, () =>
          logDecision(
            gw,
            executionEntry({
              subject,
              tool: call.tool,
              action: n.action.name,
              resource: n.resource ?? null,
              requestId: req.requestId,
              policyRevision,
              grant: presentedGrant(grant.token, e.claims),
              outcome: { kind: "grant_refused", code: e.code, error },
            }),
          ),
        );
      }
    }
  }
  return outcome;
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

/** Stages 9–10: the call runs with its grant, and its output becomes the layered result. */
async function run(gw: Gateway, req: DispatchRequest, traced?: CallAttributes): Promise<LayeredResult> {
  const dispatched = await stage("dispatch", traced, () => dispatch(gw, req));
  return stage("result", traced, () => result(gw, req.n, dispatched, req.requestId));
}

/**
 * `POST /v1/execute` (and an approved MCP call): an authenticated caller runs a call with the
 * grant Writ issued for it. Every execution is a decision-log entry (`writ/execute`), durable
 * before the answer: what ran (a summary, never the content) or why it was refused.
 */
export async function executeWithGrant(
  gw: Gateway,
  req: ExecuteRequest,
): Promise<{ tool: string; result: LayeredResult }> {
  const facts: Omit<ExecutionFacts, "outcome" | "grant"> = {
    subject: req.subject ?? null,
    tool: null,
    action: null,
    resource: null,
    requestId: req.requestId,
    policyRevision: currentRevision(gw),
  };
  let claims: GrantClaims | undefined;
  let traced: CallAttributes | undefined;
  let caller: Subject | undefined = req.subject;
  const logExecution = (outcome: ExecutionFacts["outcome"]) =>
    stage("log", traced, () =>
      logDecision(gw, executionEntry({ ...facts, grant: presentedGrant(req.grant, claims), outcome })),
    );
  try {
    const subject =
      req.subject ?? (await stage("identity", undefined, () => gw.identity.verify(req.authorization))); // 3
    caller = subject;
    facts.subject = subject;
    const calls = stage("intake", undefined, () => parseProposal(req.format ?? "canonical", req.call)).calls; // 1
    const [call] = calls;
    if (call === undefined || calls.length !== 1) {
      throw new WritError("invalid_argument", "execute takes exactly one call", {
        suggestedFix: "send one call per execute request",
        effectCommitted: false,
      });
    }
    facts.tool = call.tool;
    const n = stage("normalize", undefined, () => normalize(call, gw.contracts)); // 2
    facts.action = n.action.name;
    facts.resource = n.resource ?? null;
    traced = tracedCall(subject, n.action.name, undefined);
    const d = await stage("dispatch", traced, () =>
      dispatch(gw, { n, token: req.grant, requestId: req.requestId, subject, ...observed(req) }),
    ); // 9
    claims = d.claims;
    if (traced) traced["writ.decision_id"] = claims.dec;
    const layered = await stage("result", traced, () => result(gw, n, d, req.requestId)); // 10
    await logExecution({ kind: "ran", summary: resultSummary(layered) });
    return { tool: call.tool, result: layered };
  } catch (thrown) {
    const error = caller === undefined ? thrown : suggestedTo(gw, caller, thrown);
    const e = WritError.from(error);
    if (error instanceof GrantRefusedError) claims = error.claims;
    await logExecution(
      error instanceof GrantRefusedError
        ? { kind: "grant_refused", code: error.code, error: e }
        : { kind: "failed", error: e },
    );
    throw error;
  }
}

function observed(req: ExecuteRequest): Pick<DispatchRequest, "observer"> {
  return req.observer ? { observer: req.observer } : {};
}

/** Longest claim value copied from an unverified grant into the log. */
const UNVERIFIED_CLAIM_LIMIT = 200;

/** The grant's identity for the log: its verified claims, or what it claims (bounded). */
function presentedGrant(token: string, claims: GrantClaims | undefined): ExecutedGrant {
  if (claims) return { jti: claims.jti, decision_id: claims.dec, issued_to: claims.sub, verified: true };
  let payload: Record<string, unknown> = {};
  try {
    payload = decodeJwt(token);
  } catch {
    // not a JWT at all: nothing to record but that
  }
  const claim = (name: string) => {
    const v = payload[name];
    return typeof v === "string" ? v.slice(0, UNVERIFIED_CLAIM_LIMIT) : null;
  };
  return { jti: claim("jti"), decision_id: claim("dec"), issued_to: claim("sub"), verified: false };
}

/** What the log keeps of a result: its shape and timing, never its content. */
function resultSummary(r: LayeredResult): Record<string, unknown> {
  return {
    structured_keys: Object.keys(r.structured_content).length,
    content_items: r.content?.length ?? 0,
    artifacts: r.artifact_refs.length,
    redacted: r.redacted?.length ?? 0,
    target: r.provenance.target,
    latency_ms: r.execution_meta.latency_ms,
    attempt: r.execution_meta.attempt,
  };
}

/** An unknown tool's refusal suggesting the tools `subject` may see (discovery), never others. */
function suggestedTo<T>(gw: Gateway, subject: Subject, error: T): T | UnknownToolError {
  if (!(error instanceof UnknownToolError)) return error;
  return error.suggesting(toolDiscovery(gw).callableNames(subject, error.call.source));
}
