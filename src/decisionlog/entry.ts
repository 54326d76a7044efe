/**
 * The one place decision-log entries are put together: a refusal decided without the policy
 * (malformed payload, refused token, invalid call), and a policy evaluation (a call, or an
 * approval's second evaluation). Callers say what happened; the entry's shape lives here.
 */
import type { WritError } from "../core/errors.ts";
import type { PolicyDecision, Reason, ResourceRef, Subject } from "../core/types.ts";
import type { DecisionParts } from "./log.ts";

export interface RefusalFacts {
  path: string;
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
export function refusalEntry(f: RefusalFacts): DecisionParts {
  return {
    path: f.path,
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
}

export interface EvaluatedFacts {
  decisionId: string;
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
  const { decision, revision, failure, evalNs } = f.evaluation;
  return {
    decision_id: f.decisionId,
    path: f.path,
    input: f.input,
    ...(failure ? {} : { result: decision }),
    policy_revision: revision,
    metrics: { timer_rego_query_eval_ns: evalNs },
    subject: f.subject.id,
    tenant: f.subject.tenant,
    action: f.action,
    resource: f.resource,
    decision: f.outcome?.decision ?? decision.decision,
    reasons: f.outcome?.reasons ?? decision.reasons,
    error: f.outcome?.error ?? (failure ? failure.code : null),
    grant_jti: f.grantJti ?? null,
    approval_id: f.approvalId ?? null,
    conditions: decision.conditions,
    request_id: f.requestId,
  };
}
