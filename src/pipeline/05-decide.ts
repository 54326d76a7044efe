/**
 * Stage 5, the decision: the one builder of the policy input (calls, approvals, discovery) and
 * the one fail-closed evaluation. A policy that cannot decide (undefined, malformed, trapped,
 * slow) denies, and the failure is kept for the log.
 */
import { WritError } from "../core/errors.ts";
import type { Gateway } from "../core/gateway.ts";
import type {
  ApprovalContext,
  CanonicalAction,
  PolicyDecision,
  PolicyInput,
  ProposalSource,
  Reason,
  ResourceContext,
  RunLink,
  Subject,
} from "../core/types.ts";
import { PolicyFailure } from "../policy/index.ts";

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
  /** The Code Mode run the call is made in. */
  run?: RunLink | undefined;
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
      ...(ctx.run === undefined ? {} : { run: ctx.run }),
    },
  };
}

export interface Evaluation {
  decision: PolicyDecision;
  revision: string;
  /** Why the policy could not decide (then `decision` is the fail-closed deny). */
  failure: PolicyFailure | undefined;
  evalNs: number;
}

/** Evaluates the policy, failing closed; `what` names the thing denied in the model-facing reason. */
export function decide(
  gw: Pick<Gateway, "policy" | "metrics">,
  input: PolicyInput,
  what: "call" | "approval",
): Evaluation {
  const started = process.hrtime.bigint();
  try {
    const evaluated = gw.policy.evaluate(input);
    return {
      decision: evaluated.decision,
      revision: evaluated.revision,
      failure: undefined,
      evalNs: Number(process.hrtime.bigint() - started),
    };
  } catch (error) {
    if (!(error instanceof PolicyFailure)) throw error;
    gw.metrics.policyFailures.inc({ reason: error.code });
    return {
      decision: {
        decision: "deny",
        reasons: [
          { code: error.code, message: error.message, visible_to_model: false },
          {
            code: "policy_unavailable",
            message: `the policy could not decide this ${what}, so it is denied`,
            visible_to_model: true,
          },
        ],
        conditions: [],
      },
      revision: gw.policy.revision ?? "none",
      failure: error,
      evalNs: Number(process.hrtime.bigint() - started),
    };
  }
}

/** Whether the decision lets the call run (with a grant). */
export function allows(decision: PolicyDecision): boolean {
  return decision.decision === "allow" || decision.decision === "allow_with_conditions";
}

/** The reasons the model may see. */
export function visible(reasons: readonly Reason[]): Reason[] {
  return reasons.filter((r) => r.visible_to_model);
}

/** The refusal a denied call answers with: the reasons the model may see, and what to do. */
export function denial(decision: PolicyDecision): WritError {
  const shown = visible(decision.reasons);
  return new WritError(
    "policy_denied",
    shown.map((r) => r.message).join("; ") || "the policy denied this call",
    {
      suggestedFix:
        "change the call so the policy allows it, or ask for access; the reasons say what was refused",
    },
  );
}
