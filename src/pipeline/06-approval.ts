/**
 * Stage 6, approval: a `require_approval` decision stores a request bound to this exact call
 * (requester, contract, action and digest, resource and its revision, policy revision) with its
 * approver roles and an expiry. Approvers decide it later (src/approvals).
 *
 * The identical call proposed again (same requester, contract, action and argument digest,
 * resource revision) while its request is pending, or approved and not yet collected, gets that
 * request back instead of a new one: the human's decision is not asked for twice.
 */
import { WritError } from "../core/errors.ts";
import type { ApprovalView, Gateway } from "../core/gateway.ts";
import { timeOrderedUuid } from "../core/ids.ts";
import type { PolicyDecision, ProposedCall, Subject } from "../core/types.ts";
import type { NormalizedCall } from "../normalize/index.ts";

/** Expiry when the policy asked for approval without saying for how long. */
const DEFAULT_TTL_SECONDS = 900;

/** The approvals' clock. */
export function nowOf(gw: Pick<Gateway, "now">): Date {
  return gw.now?.() ?? new Date();
}

export interface ApprovalRequestParts {
  subject: Subject;
  call: ProposedCall;
  normalized: NormalizedCall;
  /** The resource's revision as the decision saw it (null: unknown resource). */
  resourceRevision: number | null;
  decision: PolicyDecision;
  decisionId: string;
  policyRevision: string;
  session: string | null;
}

/**
 * The request for a `require_approval` decision: the open one for this exact call (pending, or
 * approved and not collected), or a new one. One atomic step in the store, so that proposals of
 * one call racing on any number of instances open exactly one request.
 */
export async function requestApproval(gw: Gateway, p: ApprovalRequestParts): Promise<ApprovalView> {
  const now = nowOf(gw);
  const ttl = p.decision.approval?.ttl_seconds ?? DEFAULT_TTL_SECONDS;
  const n = p.normalized;
  const { record, created } = await gw.store.openOrCreateApproval(
    {
      id: timeOrderedUuid(),
      requester: p.subject,
      tool: { name: n.contract.name, version: n.contract.version, call_name: p.call.tool },
      action: n.action,
      resource: n.resource ? { type: n.resource.type, id: n.resource.id } : null,
      resource_revision: p.resourceRevision,
      policy_revision: p.policyRevision,
      decision_id: p.decisionId,
      source: p.call.source,
      session: p.session,
      // Without approver roles nobody can approve: the request can only expire (fail closed).
      approver_roles: p.decision.approval?.approver_roles ?? [],
      requested_at: now.toISOString(),
      expires_at: new Date(now.getTime() + ttl * 1000).toISOString(),
    },
    now,
  );
  return {
    id: record.id,
    status: !created && record.status === "approved" ? "approved" : "pending",
    approver_roles: record.approver_roles,
    expires_at: record.expires_at,
  };
}

/** What the caller of a call waiting for approval is told. */
export function approvalRequired(approval: ApprovalView): WritError {
  if (approval.status === "approved") {
    return new WritError(
      "approval_required",
      `this call was already approved: approval ${approval.id} holds its grant until ${approval.expires_at}`,
      {
        suggestedFix: `collect the grant with GET /v1/approvals/${approval.id} (over MCP: call the tool again with _meta {"writ/approval": "${approval.id}"}), then run the call with it`,
      },
    );
  }
  return new WritError(
    "approval_required",
    `this call needs an approval before it can run: approval ${approval.id} is pending`,
    {
      suggestedFix: `ask someone with one of the roles ${approval.approver_roles.join(", ")} to approve ${approval.id}, then fetch the grant with GET /v1/approvals/${approval.id}`,
    },
  );
}
