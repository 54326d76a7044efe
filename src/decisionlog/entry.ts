/**
 * The one place decision-log entries are put together: a refusal decided without the policy
 * (malformed payload, refused token, invalid call), and a policy evaluation (a call, or an
 * approval's second evaluation). Callers say what happened; the entry's shape lives here.
 */
import type { WritError } from "../core/errors.ts";
import { isRecord } from "../core/json.ts";
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
  /** A limit refused what the policy allowed: the policy's own decision is the entry's result. */
  overruled?: { policy: PolicyDecision; error: { category: string } };
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

/** The decision-log path of a shadow policy's disagreements (`policy.shadow`). */
export const SHADOW_PATH = "writ/shadow";

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
export function shadowEntry(f: ShadowFacts): DecisionParts {
  const { decision, revision, failure } = f.shadow;
  return {
    path: SHADOW_PATH,
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

/** The live decision a `writ/shadow` entry names (undefined for any other entry). */
export function shadowedDecisionId(entry: { path: string; input?: unknown }): string | undefined {
  if (entry.path !== SHADOW_PATH || !isRecord(entry.input)) return undefined;
  const id = entry.input.live_decision_id;
  return typeof id === "string" ? id : undefined;
}

/** The decision-log path of executions (`POST /v1/execute`, an approved MCP call). */
export const EXECUTE_PATH = "writ/execute";

/** What an execution entry records of the grant presented (claims unverified unless `verified`). */
export interface ExecutedGrant {
  jti: string | null;
  /** The decision the grant came from (its `dec` claim). */
  decision_id: string | null;
  issued_to: string | null;
  verified: boolean;
}

export interface ExecutionFacts {
  subject: Pick<Subject, "id" | "tenant"> | null;
  tool: string | null;
  action: string | null;
  resource: ResourceRef | null;
  grant: ExecutedGrant;
  requestId: string;
  policyRevision: string;
  /** How it ended: ran (a summary, never the content), the grant refused, or an error. */
  outcome:
    | { kind: "ran"; summary: Record<string, unknown> }
    | { kind: "grant_refused"; code: string; error: WritError }
    | { kind: "failed"; error: WritError };
}

/**
 * One execution: `allow` when it ran, `deny` when the grant was refused (the reason's code is the
 * grant error code), `error` when anything else stopped it (the error's category).
 */
export function executionEntry(f: ExecutionFacts): DecisionParts {
  const o = f.outcome;
  const common = {
    path: EXECUTE_PATH,
    policy_revision: f.policyRevision,
    subject: f.subject?.id ?? null,
    tenant: f.subject?.tenant ?? null,
    action: f.action,
    resource: f.resource,
    grant_jti: f.grant.verified ? f.grant.jti : null,
    request_id: f.requestId,
  };
  const input = { tool: f.tool, grant: f.grant };
  if (o.kind === "ran") {
    return {
      ...common,
      input: { ...input, result: o.summary },
      decision: "allow",
      reasons: [{ code: "executed", message: `${f.tool} ran with its grant`, visible_to_model: false }],
    };
  }
  return {
    ...common,
    input: { ...input, effect_committed: o.error.effectCommitted },
    decision: o.kind === "grant_refused" ? "deny" : "error",
    error: o.error.category,
    reasons: [
      {
        code: o.kind === "grant_refused" ? o.code : o.error.category,
        message: o.error.message,
        visible_to_model: true,
      },
    ],
  };
}

/** The decision-log path of refusals answered by the HTTP layer (401, 403, 400, 413). */
export const HTTP_PATH = "writ/http";

/** Longest message of a refused request kept in its entry (it may quote what the caller sent). */
const HTTP_MESSAGE_LIMIT = 500;

export interface HttpRefusalFacts {
  /** The route, e.g. `GET /v1/decisions/:id` (its pattern, not the path the caller sent). */
  surface: string;
  /** The caller's address. */
  source: string;
  subject: Pick<Subject, "id" | "tenant"> | null;
  error: WritError;
  requestId: string;
  policyRevision: string;
}

/**
 * A request the HTTP layer refused: `deny` for an authorization refusal (403), `error` for the
 * others (no token, a malformed or too large body), with the error's category.
 */
export function httpRefusalEntry(f: HttpRefusalFacts): DecisionParts {
  const message =
    f.error.message.length > HTTP_MESSAGE_LIMIT
      ? `${f.error.message.slice(0, HTTP_MESSAGE_LIMIT)}… (${f.error.message.length} characters)`
      : f.error.message;
  return {
    path: HTTP_PATH,
    input: { surface: f.surface, source: f.source, status: f.error.httpStatus },
    policy_revision: f.policyRevision,
    subject: f.subject?.id ?? null,
    tenant: f.subject?.tenant ?? null,
    action: f.surface,
    resource: null,
    decision: f.error.category === "forbidden" ? "deny" : "error",
    error: f.error.category,
    reasons: [{ code: f.error.category, message, visible_to_model: false }],
    request_id: f.requestId,
  };
}
