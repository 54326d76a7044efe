/** What approvals share: who may see a request, expiry on read, and the log of plain transitions. */
import { WritError } from "../core/errors.ts";
import type { Gateway } from "../core/gateway.ts";
import type { Reason, Subject } from "../core/types.ts";
import { approvalTransitionEntry } from "../decisionlog/index.ts";
import { nowOf } from "../pipeline/06-approval.ts";
import type { ApprovalRecord, ApprovalStatus } from "../store/types.ts";

export function isRequester(viewer: Subject, a: ApprovalRecord): boolean {
  return viewer.id === a.requester.id && viewer.tenant === a.requester.tenant;
}

/**
 * Whether `viewer` may decide `a`: in the requester's tenant, with one of its approver roles (the
 * API, the console and the MCP repeat call all ask here).
 */
export function isEligibleApprover(
  viewer: Pick<Subject, "tenant" | "roles">,
  a: Pick<ApprovalRecord, "requester" | "approver_roles">,
): boolean {
  return viewer.tenant === a.requester.tenant && viewer.roles.some((r) => a.approver_roles.includes(r));
}

export function notFound(id: string): WritError {
  return new WritError("not_found", `no approval ${id} that you may see`, {
    suggestedFix: "check the approval id; only its requester and its approvers can see it",
  });
}

/** Expires a pending request whose time is up (logged); returns the record as it now stands. */
export async function expireIfDue(
  gw: Gateway,
  a: ApprovalRecord,
  requestId: string,
): Promise<ApprovalRecord> {
  const now = nowOf(gw);
  if (a.status !== "pending" || now.getTime() < new Date(a.expires_at).getTime()) return a;
  const reasons: Reason[] = [
    {
      code: "approval_expired",
      message: `nobody decided approval ${a.id} before ${a.expires_at}`,
      visible_to_model: true,
    },
  ];
  const expired = await gw.store.decideApproval(
    a.id,
    "pending",
    {
      status: "expired",
      resolution: "expired",
      decided_by: null,
      decided_at: now.toISOString(),
      reason: null,
      reasons,
    },
    now,
  );
  if (!expired) return (await gw.store.getApproval(a.id)) ?? a;
  await logTransition(gw, expired, { from: "pending", actor: null, error: "approval_expired", requestId });
  return expired;
}

/** A transition that is not a policy evaluation (rejected by a person, expired). */
export async function logTransition(
  gw: Gateway,
  a: ApprovalRecord,
  t: { from: ApprovalStatus; actor: Subject | null; error: string | null; requestId: string },
): Promise<void> {
  await gw.log.append(approvalTransitionEntry({ approval: a, ...t }));
}
