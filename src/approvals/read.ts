/** Reading approvals: one request, a viewer's list, and the public view of a request. */
import { randomUUID } from "node:crypto";
import type { Gateway } from "../core/gateway.ts";
import type { Subject } from "../core/types.ts";
import { visible } from "../pipeline/05-decide.ts";
import type { ApprovalRecord, ApprovalStatus } from "../store/types.ts";
import { expireIfDue, isEligibleApprover, isRequester, notFound } from "./access.ts";

/**
 * One approval as stored, for its requester or an eligible approver; expired on read when due.
 * (Callers read it through `collect.ts`'s `readApproval`, which also collects an approved grant.)
 */
export async function approvalFor(
  gw: Gateway,
  id: string,
  viewer: Subject,
  requestId: string = randomUUID(),
): Promise<ApprovalRecord> {
  const a = await gw.store.getApproval(id);
  if (!a || !(isRequester(viewer, a) || isEligibleApprover(viewer, a))) throw notFound(id);
  return expireIfDue(gw, a, requestId);
}

/**
 * The approvals a viewer may see, newest first: their own requests and those whose approver roles
 * they hold, in their tenant. Pending requests past their expiry are expired as they are read.
 */
export async function listApprovals(
  gw: Gateway,
  viewer: Subject,
  query: { status?: ApprovalStatus },
  limit: number,
  cursor?: string,
  requestId: string = randomUUID(),
): Promise<{ approvals: ApprovalRecord[]; next_cursor?: string }> {
  const page = await gw.store.listApprovals(
    {
      tenant: viewer.tenant,
      requester: viewer.id,
      ...(viewer.roles.length > 0 ? { approverRoles: viewer.roles } : {}),
      ...(query.status ? { status: query.status } : {}),
    },
    limit,
    cursor,
  );
  const approvals: ApprovalRecord[] = [];
  for (const a of page.approvals) {
    const current = await expireIfDue(gw, a, requestId);
    if (query.status === undefined || current.status === query.status) approvals.push(current);
  }
  return { approvals, ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }) };
}

/**
 * Every approval of one tenant, for a platform role that named it (the caller scopes and logs the
 * reach first: see http/middleware/auth/tenancy.ts). Read-only: deciding stays with the tenant's
 * own approvers.
 */
export async function listTenantApprovals(
  gw: Gateway,
  tenant: string,
  query: { status?: ApprovalStatus },
  limit: number,
  cursor?: string,
): Promise<{ approvals: ApprovalRecord[]; next_cursor?: string }> {
  return gw.store.listApprovals({ tenant, ...(query.status ? { status: query.status } : {}) }, limit, cursor);
}

/** One approval of `tenant`, for a platform role that named it; another tenant's is not found. */
export async function readTenantApproval(gw: Gateway, id: string, tenant: string): Promise<ApprovalRecord> {
  const a = await gw.store.getApproval(id);
  if (!a || a.requester.tenant !== tenant) throw notFound(id);
  return a;
}

/** The public form of an approval; the grant only for the requester. */
export function approvalView(a: ApprovalRecord, viewer: Subject): Record<string, unknown> {
  const requester = isRequester(viewer, a);
  return {
    id: a.id,
    status: a.status,
    resolution: a.resolution,
    requester: {
      id: a.requester.id,
      tenant: a.requester.tenant,
      roles: a.requester.roles,
      scopes: a.requester.scopes,
    },
    tool: a.tool,
    action: {
      name: a.action.name,
      version: a.action.version,
      side_effect: a.action.side_effect,
      args: a.action.args,
      args_digest: a.action.args_digest,
    },
    resource: a.resource,
    resource_revision: a.resource_revision,
    policy_revision: a.policy_revision,
    decision_id: a.decision_id,
    approver_roles: a.approver_roles,
    requested_at: a.requested_at,
    expires_at: a.expires_at,
    decided_by: a.decided_by,
    decided_at: a.decided_at,
    reason: a.reason,
    // The requester may be the model's caller: reasons it must not see stay with the approvers.
    reasons: requester ? visible(a.reasons) : a.reasons,
    grant_jti: a.grant_jti,
    ...(requester && a.grant ? { grant: a.grant } : {}),
  };
}
