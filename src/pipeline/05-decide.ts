/**
 * Stage 5, the decision: the one builder of the policy input (calls, approvals, discovery) and
 * the one fail-closed evaluation. A policy that cannot decide (undefined, malformed, trapped,
 * slow) denies, and the failure is kept for the log.
 *
 * A call some limit applies to (src/limits/) has its usage read before the policy runs (in
 * `input.context.usage`) and, when the policy allows it, its cost charged to every bucket at once;
 * over a limit, the limit overrules the policy: the call is denied with `rate_limited` and
 * consumes nothing. A call no limit applies to costs a lookup and nothing else.
 */
import { finalArguments } from "../conditions/index.ts";
import { WritError } from "../core/errors.ts";
import type { Gateway } from "../core/gateway.ts";
import type {
  ApprovalContext,
  CanonicalAction,
  HistoryValue,
  LimitUsage,
  PolicyDecision,
  PolicyInput,
  ProposalSource,
  Reason,
  ResourceContext,
  RunLink,
  Subject,
} from "../core/types.ts";
import { charge, type Limit, type Metered, meter, NO_LIMITS } from "../limits/index.ts";
import { type Decided, evaluateFailClosed, type FailClosedEvaluation } from "../policy/index.ts";

export interface PolicyContextParts {
  requestId: string;
  source: ProposalSource;
  session?: string | undefined;
  /** Default `call`; discovery asks with `discover`. */
  phase?: "call" | "discover";
  /** Set when an approver's approval is being evaluated. */
  approval?: ApprovalContext;
  /** When the decision is taken (default: now). */
  at?: Date;
  /** The usage of the limits that apply to the call (src/limits/). */
  usage?: Record<string, LimitUsage>;
  /** The Code Mode run the call is made in. */
  run?: RunLink | undefined;
  /** The history facts that apply to the call (05-history.ts). */
  history?: Record<string, HistoryValue> | undefined;
}

export function policyInput(
  subject: Subject,
  action: CanonicalAction,
  resource: ResourceContext,
  ctx: PolicyContextParts,
): PolicyInput {
  return {
    subject,
    action,
    resource,
    context: {
      time_ns: (ctx.at?.getTime() ?? Date.now()) * 1_000_000,
      request_id: ctx.requestId,
      source: ctx.source,
      ...(ctx.session === undefined ? {} : { session: ctx.session }),
      phase: ctx.phase ?? "call",
      ...(ctx.approval === undefined ? {} : { approval: ctx.approval }),
      ...(ctx.usage === undefined ? {} : { usage: ctx.usage }),
      ...(ctx.run === undefined ? {} : { run: ctx.run }),
      ...(ctx.history === undefined ? {} : { history: ctx.history }),
    },
  };
}

export interface Evaluation extends FailClosedEvaluation {
  /** The input the policy was asked with. */
  input: PolicyInput;
  /** What was decided: the policy's decision, or a limit's denial that overruled its allow. */
  decision: PolicyDecision;
  /** Set when a limit refused what the policy allowed: the policy's own decision, and the refusal. */
  overruled?: { policy: PolicyDecision; error: WritError };
}

/** Evaluates the policy, failing closed (src/policy/fail-closed.ts); a failure is counted. */
export function decide(
  gw: Pick<Gateway, "policy" | "metrics">,
  input: PolicyInput,
  what: Decided,
): Evaluation {
  const evaluated = evaluateFailClosed(gw.policy, input, what);
  if (evaluated.failure) gw.metrics.policyFailures.inc({ reason: evaluated.failure.code });
  return { input, ...evaluated };
}

/**
 * Stage 5 for a proposed call: the limits that apply metered into the input, the policy, and an
 * allowed call charged to its limits. Synchronous (no store round trip) when no limit applies.
 */
export function evaluateCall(
  gw: Pick<Gateway, "policy" | "metrics" | "store" | "limits" | "now">,
  input: PolicyInput,
): Evaluation | Promise<Evaluation> {
  const limits = applicableLimits(gw, input.subject, input.action);
  if (limits.length === 0) return decide(gw, input, "call");
  return evaluateLimited(gw, input, limits);
}

async function evaluateLimited(
  gw: Pick<Gateway, "policy" | "metrics" | "store" | "now">,
  unmetered: PolicyInput,
  limits: readonly Limit[],
): Promise<Evaluation> {
  const { subject, action, context } = unmetered;
  const metered = await meter(gw.store, limits, { subject, action, session: context.session }, clock(gw));
  const input = { ...unmetered, context: { ...context, usage: metered.usage } };
  const evaluation = decide(gw, input, "call");
  if (!allows(evaluation.decision)) return evaluation;
  const refusal = await chargeLimits(gw, metered, action, evaluation.decision);
  return refusal === undefined ? evaluation : overrule(evaluation, refusal);
}

/** The limits that apply to a call (the same empty array when none does). */
export function applicableLimits(
  gw: Pick<Gateway, "limits">,
  subject: Subject,
  action: CanonicalAction,
): readonly Limit[] {
  return gw.limits?.applicable(subject, action) ?? NO_LIMITS;
}

/**
 * The usage of the limits that apply to a call, read before the policy runs (an approval's
 * re-run); undefined when none applies.
 */
export async function meterCall(
  gw: Pick<Gateway, "limits" | "store" | "now">,
  subject: Subject,
  action: CanonicalAction,
  session: string | undefined,
): Promise<Metered | undefined> {
  const limits = applicableLimits(gw, subject, action);
  if (limits.length === 0) return undefined;
  return meter(gw.store, limits, { subject, action, session }, clock(gw));
}

/**
 * Charges an allowed call (its final arguments: the decision's overrides applied) to its
 * limits; the refusal when any is over (nothing charged then). Counted in the metrics by limit.
 */
export async function chargeLimits(
  gw: Pick<Gateway, "store" | "metrics" | "now">,
  metered: Metered,
  action: CanonicalAction,
  decision: PolicyDecision,
): Promise<WritError | undefined> {
  if (metered.limits.length === 0) return undefined;
  const args = finalArguments(action.args, decision.conditions);
  const charged = await charge(gw.store, metered, args, clock(gw));
  for (const name of charged.over) gw.metrics.limitRefusals.inc({ limit: name });
  if (charged.refusal === undefined) {
    for (const limit of metered.limits) gw.metrics.limitCharged.inc({ limit: limit.name });
  }
  return charged.refusal;
}

/** The evaluation as a limit's refusal overruled it: denied, the reason naming the limit. */
export function overrule(evaluation: Evaluation, error: WritError): Evaluation {
  return {
    ...evaluation,
    decision: {
      decision: "deny",
      reasons: [{ code: error.category, message: error.message, visible_to_model: true }],
      conditions: [],
    },
    overruled: { policy: evaluation.decision, error },
  };
}

/** The gateway's clock (the approvals' too). */
function clock(gw: Pick<Gateway, "now">): Date {
  return gw.now?.() ?? new Date();
}

/** Whether the decision lets the call run (with a grant). */
export function allows(decision: PolicyDecision): boolean {
  return decision.decision === "allow" || decision.decision === "allow_with_conditions";
}

/** The reasons the model may see. */
export function visible(reasons: readonly Reason[]): Reason[] {
  return reasons.filter((r) => r.visible_to_model);
}

/**
 * The refusal a denied call answers with: the reasons the model may see, and what to do. With
 * `requiredScopes` (a step-up the caller may see: `discovery`'s `scopeChallenge`), the scopes the
 * call needs, which the caller's token lacks some of.
 */
export function denial(decision: PolicyDecision, requiredScopes?: readonly string[]): WritError {
  const shown = visible(decision.reasons);
  const message = shown.map((r) => r.message).join("; ") || "the policy denied this call";
  if (requiredScopes !== undefined) {
    return new WritError("policy_denied", message, {
      suggestedFix: `get a token that also carries the scopes ${requiredScopes.join(" ")} (required_scopes) from your authorization server, then send the call again`,
      requiredScopes,
    });
  }
  return new WritError("policy_denied", message, {
    suggestedFix:
      "change the call so the policy allows it, or ask for access; the reasons say what was refused",
  });
}
