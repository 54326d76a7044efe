/**
 * Collecting an approved request's grant. The grant is minted when the requester collects it (by
 * reading the request: `GET /v1/approvals/:id`, or the MCP repeat call with
 * `_meta["writ/approval"]`), at any time before the request expires, and lives its TTL from then:
 * an agent that comes back late still runs the call the human approved.
 *
 * A request releases at most one grant: the first collection records its jti (compare-and-swap
 * in the store) and every later read returns that same grant, which is single use like any other.
 * Returning it again (rather than refusing) lets a requester whose answer was lost collect it
 * again without another human decision, and can never run the call twice. An approved request
 * nobody collected before its expiry is expired (logged) like a pending one.
 */
import { randomUUID } from "node:crypto";
import type { Gateway } from "../core/gateway.ts";
import type { Reason, Subject } from "../core/types.ts";
import { approvalCollectedEntry } from "../decisionlog/index.ts";
import { nowOf } from "../pipeline/06-approval.ts";
import { issueGrant } from "../pipeline/07-grant.ts";
import type { ApprovalRecord } from "../store/types.ts";
import { isRequester, logTransition } from "./access.ts";
import { contractOf } from "./decide.ts";
import { approvalFor } from "./read.ts";

/**
 * One approval, for its requester or an eligible approver (expired on read when due); for its
 * requester, an approved request's grant is collected: minted on the first read, the same one
 * after.
 */
export async function readApproval(
  gw: Gateway,
  id: string,
  viewer: Subject,
  requestId: string = randomUUID(),
): Promise<ApprovalRecord> {
  const a = await approvalFor(gw, id, viewer, requestId);
  if (!isRequester(viewer, a) || a.status !== "approved" || a.grant !== null) return a;
  return collectGrant(gw, a, requestId);
}

/** Mints, records and logs the grant of an approved request nobody collected yet. */
async function collectGrant(gw: Gateway, a: ApprovalRecord, requestId: string): Promise<ApprovalRecord> {
  const now = nowOf(gw);
  if (now.getTime() >= new Date(a.expires_at).getTime()) return expireUncollected(gw, a, now, requestId);
  const release = a.release;
  if (release === null) return a; // approved before grants were minted on collection: nothing to mint
  // The resource moved since the approval (another owner, other attributes): the approver never
  // saw it as it is now, so no grant is minted. (Dispatch checks the grant's revision again at the
  // moment of effect, for a grant collected before the resource moved.)
  const stored = a.resource ? await gw.store.getResource(a.resource.type, a.resource.id) : undefined;
  const revisionNow = stored === undefined ? null : String(stored.revision);
  if (a.resource !== null && revisionNow !== release.resource_revision) {
    return closeStale(gw, a, release.resource_revision, revisionNow, now, requestId);
  }

  const grant = await issueGrant(gw, {
    subject: a.requester,
    contract: contractOf(gw, a),
    action: a.action,
    resource: a.resource ?? undefined,
    resourceRevision: release.resource_revision ?? undefined,
    decision: release.decision,
    decisionId: release.decision_id,
    policyRevision: release.policy_revision,
  });
  // On the record before it can leave Writ. Should another collection win the race below, this
  // grant is never handed out and its entry names a jti nobody holds.
  await gw.log.append(approvalCollectedEntry({ approval: a, release, grant, requestId }));
  const collected = await gw.store.collectApprovalGrant(a.id, grant, now);
  return collected ?? (await current(gw, a));
}

function expireUncollected(gw: Gateway, a: ApprovalRecord, now: Date, requestId: string) {
  const message = `approval ${a.id} was approved, but its grant was not collected before ${a.expires_at}: propose the call again`;
  return closeUncollected(gw, a, { status: "expired", code: "approval_expired", message }, now, requestId);
}

/** Rejects an approved request whose resource moved before its grant was collected. */
function closeStale(
  gw: Gateway,
  a: ApprovalRecord,
  approvedOn: string | null,
  movedTo: string | null,
  now: Date,
  requestId: string,
) {
  const where = a.resource ? `${a.resource.type}/${a.resource.id}` : "the resource";
  const message = `${where} changed since approval ${a.id} was approved (revision ${approvedOn ?? "none"} → ${movedTo ?? "none"}): propose the call again`;
  return closeUncollected(gw, a, { status: "rejected", code: "stale_revision", message }, now, requestId);
}

/**
 * Ends an approved request nobody collected (compare-and-swap in the store) and logs the
 * transition; another collection or close that won the race leaves it as that one did.
 */
async function closeUncollected(
  gw: Gateway,
  a: ApprovalRecord,
  end: { status: "expired" | "rejected"; code: "approval_expired" | "stale_revision"; message: string },
  now: Date,
  requestId: string,
): Promise<ApprovalRecord> {
  const reasons: Reason[] = [{ code: end.code, message: end.message, visible_to_model: true }];
  const closed = await gw.store.closeUncollectedApproval(
    a.id,
    {
      status: end.status,
      resolution: end.status === "expired" ? "expired" : "stale_revision",
      decided_by: a.decided_by,
      decided_at: a.decided_at ?? now.toISOString(),
      reason: a.reason,
      reasons,
      release: null,
    },
    now,
  );
  if (!closed) return current(gw, a);
  await logTransition(gw, closed, { from: "approved", actor: null, error: end.code, requestId });
  return closed;
}

/** The request as another collection (or expiry) left it. */
async function current(gw: Gateway, a: ApprovalRecord): Promise<ApprovalRecord> {
  return (await gw.store.getApproval(a.id)) ?? a;
}
