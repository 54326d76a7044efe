/**
 * Approvals (DESIGN section 6). When the policy answers `require_approval`, the pipeline stores a
 * request bound to the requester, the contract, the canonical action (arguments and digest), the
 * policy revision, the resource and its revision, the approver roles and an expiry.
 *
 * Approving re-runs the policy with the ORIGINAL subject and action and `input.context.approval`
 * set, and re-reads the resource: a changed revision ends the request as a `stale_revision`
 * denial; an allow releases a grant to the requester (sub = requester), issued exactly like the
 * pipeline's; a denial rejects the request with the policy's reasons; a policy that still asks for
 * approval (e.g. the requester approving their own call) refuses the approver and leaves the
 * request pending. A pending request past its expiry is expired when read or decided.
 *
 * Every decision is a compare-and-swap on `pending` in the store, so a request is decided exactly
 * once across instances; every transition appends a decision-log entry carrying `approval_id`.
 */
import { randomUUID } from "node:crypto";
import { WritError } from "../core/errors.ts";
import type { PolicyDecision, PolicyInput, ProposedCall, Reason, Subject } from "../core/types.ts";
import type { NormalizedCall } from "../normalize/index.ts";
import type { ApprovalView, Gateway, IssuedGrantView } from "../pipeline.ts";
import { issueGrant, resourceContext, visible } from "../pipeline.ts";
import { PolicyFailure } from "../policy/index.ts";
import type { ApprovalGrant, ApprovalRecord, ApprovalStatus, ApprovalUpdate } from "../store/types.ts";

/** The decision-log path of approval transitions that are not policy evaluations. */
export const APPROVALS_PATH = "writ/approvals";
/** Expiry when the policy asked for approval without saying for how long. */
const DEFAULT_TTL_SECONDS = 900;

function nowOf(gw: Gateway): Date {
  return gw.now?.() ?? new Date();
}

// ---------------------------------------------------------------------------------- requests

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

/** Stage 6: stores the approval request for a `require_approval` decision. */
export async function requestApproval(gw: Gateway, p: ApprovalRequestParts): Promise<ApprovalView> {
  const now = nowOf(gw);
  const ttl = p.decision.approval?.ttl_seconds ?? DEFAULT_TTL_SECONDS;
  const n = p.normalized;
  const record = await gw.store.createApproval({
    id: randomUUID(),
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
  });
  return {
    id: record.id,
    status: "pending",
    approver_roles: record.approver_roles,
    expires_at: record.expires_at,
  };
}

// ---------------------------------------------------------------------------------- reading

function isRequester(viewer: Subject, a: ApprovalRecord): boolean {
  return viewer.id === a.requester.id && viewer.tenant === a.requester.tenant;
}

function isEligibleApprover(viewer: Subject, a: ApprovalRecord): boolean {
  return viewer.tenant === a.requester.tenant && viewer.roles.some((r) => a.approver_roles.includes(r));
}

function notFound(id: string): WritError {
  return new WritError("not_found", `no approval ${id} that you may see`, {
    suggestedFix: "check the approval id; only its requester and its approvers can see it",
  });
}

/** Expires a pending request whose time is up (logged); returns the record as it now stands. */
async function expireIfDue(gw: Gateway, a: ApprovalRecord, requestId: string): Promise<ApprovalRecord> {
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

/** One approval, for its requester or an eligible approver; expired on read when due. */
export async function readApproval(
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

// ---------------------------------------------------------------------------------- deciding

/** Loads a request an approver may decide: visible, still pending, not expired, role held. */
async function decidable(
  gw: Gateway,
  id: string,
  approver: Subject,
  requestId: string,
): Promise<ApprovalRecord> {
  const found = await gw.store.getApproval(id);
  if (!found || !(isRequester(approver, found) || isEligibleApprover(approver, found))) {
    // The same answer whether or not the request exists: its existence is not revealed.
    throw new WritError("forbidden", `you may not decide approval ${id}`, {
      suggestedFix: "only an approver with one of the request's approver roles, in its tenant, can decide it",
    });
  }
  const a = await expireIfDue(gw, found, requestId);
  if (a.status === "expired") {
    throw new WritError("approval_expired", `approval ${id} expired at ${a.expires_at}`, {
      suggestedFix: "propose the call again to open a new approval request",
    });
  }
  if (a.status !== "pending") {
    throw new WritError("conflict", `approval ${id} was already decided: ${a.status}`, {
      suggestedFix: "read the approval to see how it was decided",
    });
  }
  if (!isEligibleApprover(approver, a)) {
    throw new WritError(
      "forbidden",
      `deciding approval ${id} needs one of the roles ${a.approver_roles.join(", ") || "(none)"}`,
      { suggestedFix: "ask someone with one of those roles to decide it" },
    );
  }
  return a;
}

/** The CAS lost: someone else decided (or it expired) in between. */
async function lostRace(gw: Gateway, id: string): Promise<WritError> {
  const now = await gw.store.getApproval(id);
  if (now?.status === "expired" || (now?.status === "pending" && new Date(now.expires_at) <= nowOf(gw))) {
    return new WritError("approval_expired", `approval ${id} expired at ${now.expires_at}`, {
      suggestedFix: "propose the call again to open a new approval request",
    });
  }
  return new WritError("conflict", `approval ${id} was decided by someone else in the meantime`, {
    suggestedFix: "read the approval to see how it was decided",
  });
}

export interface ApproveResult {
  approval: ApprovalRecord;
  grant: IssuedGrantView;
}

/**
 * Approves a pending request: the policy runs again with the approval in its input, the
 * resource revision is re-checked, and on an allow a grant is issued to the requester.
 */
export async function approve(
  gw: Gateway,
  id: string,
  approver: Subject,
  reason: string | null,
  requestId: string = randomUUID(),
): Promise<ApproveResult> {
  const a = await decidable(gw, id, approver, requestId);
  const now = nowOf(gw);

  // Re-read the resource; the policy sees it as it is now, with the original subject and action.
  const ref = a.resource ?? undefined;
  const { context: resource, stored } = await resourceContext(gw.store, ref);
  const input: PolicyInput = {
    subject: a.requester,
    action: a.action,
    resource,
    context: {
      time_ns: now.getTime() * 1_000_000,
      request_id: requestId,
      source: a.source,
      ...(a.session === null ? {} : { session: a.session }),
      phase: "call",
      approval: {
        id: a.id,
        approver: { id: approver.id, roles: approver.roles },
        at_ns: now.getTime() * 1_000_000,
      },
    },
  };
  const { decision, revision, failure, evalNs } = evaluate(gw, input);
  const decisionId = randomUUID();
  const logged = {
    decision_id: decisionId,
    path: gw.policy.entrypoint,
    input,
    ...(failure ? {} : { result: decision }),
    policy_revision: revision,
    metrics: { timer_rego_query_eval_ns: evalNs },
    subject: a.requester.id,
    tenant: a.requester.tenant,
    action: a.action.name,
    resource: a.resource,
    error: failure ? failure.code : null,
    approval_id: a.id,
    conditions: decision.conditions,
    request_id: requestId,
  };

  // Still asking for approval: this approver's approval does not count (self-approval, or a role
  // the policy does not accept). Nothing changes; the attempt is on the record.
  if (decision.decision === "require_approval") {
    await gw.log.append({ ...logged, decision: "require_approval", reasons: decision.reasons });
    const self = approver.id === a.requester.id;
    throw new WritError(
      "forbidden",
      self
        ? `the requester cannot approve their own request ${a.id}: the policy does not allow it`
        : `the policy does not accept ${approver.id}'s approval of ${a.id}`,
      { suggestedFix: "ask another approver with one of the roles to decide it" },
    );
  }

  // The resource moved since the request: never a grant on what the approver did not see.
  const currentRevision = stored?.revision ?? null;
  if (currentRevision !== a.resource_revision) {
    const reasons: Reason[] = [
      {
        code: "stale_revision",
        message: `${a.resource ? `${a.resource.type}/${a.resource.id}` : "the resource"} changed since the request (revision ${a.resource_revision ?? "none"} → ${currentRevision ?? "none"}): propose the call again`,
        visible_to_model: true,
      },
    ];
    const decided = await gw.store.decideApproval(
      a.id,
      "pending",
      {
        status: "rejected",
        resolution: "stale_revision",
        decided_by: approver.id,
        decided_at: now.toISOString(),
        reason,
        reasons,
      },
      now,
    );
    if (!decided) throw await lostRace(gw, a.id);
    await gw.log.append({ ...logged, decision: "deny", reasons, error: "stale_revision" });
    throw new WritError(
      "stale_revision",
      `approval ${a.id} was not granted: the resource changed since the request (status rejected, resolution stale_revision)`,
      { suggestedFix: "the requester must read the resource again and propose the call again" },
    );
  }

  if (decision.decision === "deny") {
    const decided = await gw.store.decideApproval(
      a.id,
      "pending",
      {
        status: "rejected",
        resolution: "policy_denied",
        decided_by: approver.id,
        decided_at: now.toISOString(),
        reason,
        reasons: decision.reasons,
      },
      now,
    );
    if (!decided) throw await lostRace(gw, a.id);
    await gw.log.append({ ...logged, decision: "deny", reasons: decision.reasons });
    throw new WritError(
      "policy_denied",
      `the policy denied approval ${a.id}: ${decision.reasons.map((r) => r.message).join("; ") || "no reason given"} (status rejected, resolution policy_denied)`,
      { suggestedFix: "read the approval's reasons; the requester must change the call" },
    );
  }

  // Allowed: the grant goes to the requester, bound to the request's exact action and resource.
  const grant = await issueGrant(gw, {
    subject: a.requester,
    contract: contractOf(gw, a),
    action: a.action,
    resource: ref,
    resourceRevision: resource.revision,
    decision,
    decisionId,
    policyRevision: revision,
  });
  const decided = await gw.store.decideApproval(
    a.id,
    "pending",
    {
      status: "approved",
      resolution: "approved",
      decided_by: approver.id,
      decided_at: now.toISOString(),
      reason,
      reasons: decision.reasons,
      grant: grant satisfies ApprovalGrant,
    },
    now,
  );
  if (!decided) throw await lostRace(gw, a.id); // the signed grant never leaves Writ
  await gw.log.append({
    ...logged,
    decision: decision.decision,
    reasons: decision.reasons,
    grant_jti: grant.jti,
  });
  return { approval: decided, grant };
}

/** Rejects a pending request; the reason is required and recorded. */
export async function reject(
  gw: Gateway,
  id: string,
  approver: Subject,
  reason: string,
  requestId: string = randomUUID(),
): Promise<ApprovalRecord> {
  const a = await decidable(gw, id, approver, requestId);
  const now = nowOf(gw);
  const update: ApprovalUpdate = {
    status: "rejected",
    resolution: "rejected",
    decided_by: approver.id,
    decided_at: now.toISOString(),
    reason,
    reasons: [
      { code: "approval_rejected", message: `rejected by ${approver.id}: ${reason}`, visible_to_model: true },
    ],
  };
  const decided = await gw.store.decideApproval(a.id, "pending", update, now);
  if (!decided) throw await lostRace(gw, a.id);
  await logTransition(gw, decided, {
    from: "pending",
    actor: approver,
    error: null,
    requestId,
  });
  return decided;
}

// ---------------------------------------------------------------------------------- helpers

function contractOf(gw: Gateway, a: ApprovalRecord) {
  const contract = gw.contracts.get(a.tool.name, a.tool.version);
  if (!contract) {
    throw new WritError(
      "backend_unavailable",
      `the contract ${a.tool.name}@${a.tool.version} of approval ${a.id} is no longer configured`,
      { suggestedFix: "restore the tool's contract, or propose the call again with a configured tool" },
    );
  }
  return contract;
}

function evaluate(
  gw: Gateway,
  input: PolicyInput,
): { decision: PolicyDecision; revision: string; failure: PolicyFailure | undefined; evalNs: number } {
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
            message: "the policy could not decide this approval, so it is denied",
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

/** A transition that is not a policy evaluation (rejected by a person, expired). */
async function logTransition(
  gw: Gateway,
  a: ApprovalRecord,
  t: { from: ApprovalStatus; actor: Subject | null; error: string | null; requestId: string },
): Promise<void> {
  await gw.log.append({
    path: APPROVALS_PATH,
    input: {
      approval: { id: a.id, from: t.from, to: a.status, resolution: a.resolution },
      actor: t.actor ? { id: t.actor.id, roles: t.actor.roles } : null,
      reason: a.reason,
      action: { name: a.action.name, version: a.action.version, args_digest: a.action.args_digest },
    },
    policy_revision: a.policy_revision,
    subject: a.requester.id,
    tenant: a.requester.tenant,
    action: a.action.name,
    resource: a.resource,
    decision: "deny",
    reasons: a.reasons,
    error: t.error,
    approval_id: a.id,
    request_id: t.requestId,
  });
}
