/**
 * Entries of approval requests that are not policy evaluations (an approval's second evaluation
 * is a decision entry): a plain transition (rejected by a person, expired), a grant collected, and
 * an approver's decision refused.
 */
import type { Reason, Subject } from "../../core/types.ts";
import type { ApprovalRecord, ApprovalRelease, ApprovalStatus } from "../../store/types.ts";
import type { DecisionParts } from "../log.ts";

/** What an approval entry names of the request. */
export type ApprovalFacts = Pick<
  ApprovalRecord,
  | "id"
  | "status"
  | "resolution"
  | "reason"
  | "reasons"
  | "action"
  | "requester"
  | "resource"
  | "policy_revision"
>;

/** The call an approval entry names: the action without its arguments (their digest only). */
function actionOf(a: ApprovalFacts) {
  return { name: a.action.name, version: a.action.version, args_digest: a.action.args_digest };
}

export interface ApprovalTransitionFacts {
  /** The request as it now stands. */
  approval: ApprovalFacts;
  from: ApprovalStatus;
  /** Who moved it (null: nobody, it expired). */
  actor: Pick<Subject, "id" | "roles"> | null;
  error: string | null;
  requestId: string;
}

/** A transition that is not a policy evaluation: `deny`, with the request's own reasons. */
export function approvalTransitionParts(path: string, f: ApprovalTransitionFacts): DecisionParts {
  const a = f.approval;
  return {
    path,
    input: {
      approval: { id: a.id, from: f.from, to: a.status, resolution: a.resolution },
      actor: f.actor ? { id: f.actor.id, roles: f.actor.roles } : null,
      reason: a.reason,
      action: actionOf(a),
    },
    policy_revision: a.policy_revision,
    subject: a.requester.id,
    tenant: a.requester.tenant,
    action: a.action.name,
    resource: a.resource,
    decision: "deny",
    reasons: a.reasons,
    error: f.error,
    approval_id: a.id,
    request_id: f.requestId,
  };
}

export interface ApprovalCollectedFacts {
  approval: ApprovalFacts;
  release: Pick<ApprovalRelease, "decision_id" | "policy_revision" | "decision">;
  grant: { jti: string; expires_at: string };
  requestId: string;
}

/** The requester collected an approved request's grant: the approving decision, with the grant's jti. */
export function approvalCollectedParts(path: string, f: ApprovalCollectedFacts): DecisionParts {
  const { approval: a, release, grant } = f;
  const reasons: Reason[] = [
    {
      code: "approval_grant_collected",
      message: `the requester collected the grant of approval ${a.id}`,
      visible_to_model: true,
    },
  ];
  return {
    path,
    input: {
      approval: { id: a.id, from: a.status, to: a.status, resolution: a.resolution },
      collected: { jti: grant.jti, expires_at: grant.expires_at, decision_id: release.decision_id },
      action: actionOf(a),
    },
    policy_revision: release.policy_revision,
    subject: a.requester.id,
    tenant: a.requester.tenant,
    action: a.action.name,
    resource: a.resource,
    decision: release.decision.decision,
    reasons,
    conditions: release.decision.conditions,
    error: null,
    grant_jti: grant.jti,
    approval_id: a.id,
    request_id: f.requestId,
  };
}

/** Longest approval id an entry keeps of a refused attempt (the caller chose it). */
const APPROVAL_ID_LIMIT = 200;

export interface ApprovalRefusalFacts {
  attempt: "approve" | "reject";
  /** The id the approver named, as sent. */
  approvalId: string;
  approver: Pick<Subject, "id" | "tenant" | "roles">;
  /** Why it was refused. */
  error: { category: string; message: string };
  requestId: string;
  policyRevision: string;
}

/** An approver's decision refused (not visible, not eligible, own request, expired, decided…): `deny`. */
export function approvalRefusalParts(path: string, f: ApprovalRefusalFacts): DecisionParts {
  const { approver } = f;
  return {
    path,
    input: {
      attempt: f.attempt,
      approval: { id: f.approvalId.slice(0, APPROVAL_ID_LIMIT) },
      actor: { id: approver.id, tenant: approver.tenant, roles: approver.roles },
    },
    policy_revision: f.policyRevision,
    subject: approver.id,
    tenant: approver.tenant,
    action: `${f.attempt} approval`,
    resource: null,
    decision: "deny",
    reasons: [{ code: "approval_decision_refused", message: f.error.message, visible_to_model: false }],
    error: f.error.category,
    // On the approver's tenant's record: a request of another tenant is not revealed to its own.
    approval_id: f.approvalId.length <= APPROVAL_ID_LIMIT ? f.approvalId : null,
    request_id: f.requestId,
  };
}
