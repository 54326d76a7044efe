/**
 * Entries of the policy's own work: a call refused before any policy ran (a malformed payload, a
 * refused token, an invalid call), a policy evaluation (a call, or an approval's second
 * evaluation), and a shadow policy's disagreement. Their paths are in `../kinds.ts`.
 */
import type { WritError } from "../../core/errors.ts";
import type { PolicyDecision, Reason, ResourceRef, Subject } from "../../core/types.ts";
import type { DecisionParts } from "../log.ts";

export interface RefusalFacts {
  input: unknown;
  policyRevision: string;
  /** The caller, once verified (null before or without identity). */
  subject: Pick<Subject, "id" | "tenant"> | null;
  action: string | null;
  resource: ResourceRef | null;
  error: WritError;
  requestId: string;
}

/** A refusal that no policy decided: decision `error`, the error's category as its one reason. */
export function refusalParts(path: string, f: RefusalFacts): DecisionParts {
  return {
    path,
    input: f.input,
    policy_revision: f.policyRevision,
    subject: f.subject?.id ?? null,
    tenant: f.subject?.tenant ?? null,
    action: f.action,
    resource: f.resource,
    decision: "error",
    error: f.error.category,
    reasons: [{ code: f.error.category, message: f.error.message, visible_to_model: true }],
    request_id: f.requestId,
  };
}

/** A policy evaluation as the decide stage reports it (failure: the policy could not decide). */
export interface EvaluationFacts {
  decision: PolicyDecision;
  revision: string;
  failure: { code: string } | undefined;
  evalNs: number;
  /** A limit refused what the policy allowed: the policy's own decision is the entry's result. */
  overruled?: { policy: PolicyDecision; error: { category: string } };
}

export interface EvaluatedFacts {
  decisionId: string;
  /** The policy's entrypoint (`policy.entrypoint`): a decision's path is the rule that decided it. */
  path: string;
  input: unknown;
  evaluation: EvaluationFacts;
  subject: Pick<Subject, "id" | "tenant">;
  action: string;
  resource: ResourceRef | null;
  requestId: string;
  grantJti?: string | null;
  approvalId?: string | null;
  /** What was decided, when it is not the policy's decision as is (an approval gone stale). */
  outcome?: { decision: PolicyDecision["decision"]; reasons: Reason[]; error?: string };
}

/** An evaluated decision: the policy's result (unless it failed), its timing and what followed. */
export function evaluationEntry(f: EvaluatedFacts): DecisionParts {
  const { decision, revision, failure, evalNs, overruled } = f.evaluation;
  return {
    decision_id: f.decisionId,
    path: f.path,
    input: f.input,
    ...(failure ? {} : { result: overruled?.policy ?? decision }),
    policy_revision: revision,
    metrics: { timer_rego_query_eval_ns: evalNs },
    subject: f.subject.id,
    tenant: f.subject.tenant,
    action: f.action,
    resource: f.resource,
    decision: f.outcome?.decision ?? decision.decision,
    reasons: f.outcome?.reasons ?? decision.reasons,
    error: f.outcome?.error ?? (failure ? failure.code : (overruled?.error.category ?? null)),
    grant_jti: f.grantJti ?? null,
    approval_id: f.approvalId ?? null,
    conditions: decision.conditions,
    request_id: f.requestId,
  };
}

export interface ShadowFacts {
  /** The live decision the shadow policy disagreed with. */
  live: { decisionId: string; decision: PolicyDecision; revision: string };
  shadow: { decision: PolicyDecision; revision: string; failure: string | undefined };
  subject: Pick<Subject, "id" | "tenant">;
  action: string;
  resource: ResourceRef | null;
  requestId: string;
}

/**
 * A disagreement of the shadow policy: its decision, under its own revision, with the live
 * decision's id (its entry holds the input both decided on) and what the live policy decided.
 */
export function shadowParts(path: string, f: ShadowFacts): DecisionParts {
  const { decision, revision, failure } = f.shadow;
  return {
    path,
    input: {
      live_decision_id: f.live.decisionId,
      live: {
        decision: f.live.decision.decision,
        reasons: f.live.decision.reasons.map((r) => r.code),
        policy_revision: f.live.revision,
      },
    },
    ...(failure ? {} : { result: decision }),
    policy_revision: revision,
    subject: f.subject.id,
    tenant: f.subject.tenant,
    action: f.action,
    resource: f.resource,
    decision: decision.decision,
    reasons: decision.reasons,
    error: failure ?? null,
    conditions: decision.conditions,
    request_id: f.requestId,
  };
}
