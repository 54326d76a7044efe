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
import type { Gateway } from "../core/gateway.ts";
import type { Reason, Subject } from "../core/types.ts";
import { approvalRefusalEntry } from "../decisionlog/index.ts";
import { chargeLimits } from "../pipeline/05-decide.ts";
import { nowOf } from "../pipeline/06-approval.ts";
import { type Decision, decideAndLog, type Settled } from "../pipeline/decide-and-log.ts";
import type { ApprovalRecord, ApprovalUpdate } from "../store/types.ts";
import { expireIfDue, isEligibleApprover, isRequester, logTransition } from "./access.ts";

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

/** How an approver's decision was tried, for the record of a refused one. */
type Attempt = "approve" | "reject";

/**
 * Runs the checks before a decision; a refusal (not visible, not eligible, own request, expired,
 * already decided, an empty reason) is a decision-log entry before it is thrown.
 */
async function refusedOnRecord<T>(
  gw: Gateway,
  attempt: DecisionAttempt,
  check: () => Promise<T>,
): Promise<T> {
  try {
    return await check();
  } catch (error) {
    throw await logRefusal(gw, attempt, error);
  }
}

interface DecisionAttempt {
  op: Attempt;
  id: string;
  approver: Subject;
  requestId: string;
}

/** Appends the refusal of an approver's decision; answers the error to throw. */
async function logRefusal(gw: Gateway, attempt: DecisionAttempt, error: unknown): Promise<unknown> {
  const e = WritError.from(error);
  const { approver } = attempt;
  await gw.log.append(
    approvalRefusalEntry({
      attempt: attempt.op,
      approvalId: attempt.id,
      approver,
      error: e,
      requestId: attempt.requestId,
      policyRevision: gw.policy.revision ?? "none",
    }),
  );
  return error;
}

/** A reason as recorded: trimmed; empty or whitespace only is none. */
function trimmedReason(reason: string | null): string | null {
  const trimmed = reason?.trim() ?? "";
  return trimmed === "" ? null : trimmed;
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
}

/**
 * Approves a pending request: the policy runs again with the approval in its input, the
 * resource revision is re-checked, and on an allow the request is approved; its requester
 * collects the grant later (`collectGrant`), at any time before the request expires.
 */
export async function approve(
  gw: Gateway,
  id: string,
  approver: Subject,
  rawReason: string | null,
  requestId: string = randomUUID(),
): Promise<ApproveResult> {
  const reason = trimmedReason(rawReason);
  const attempt: DecisionAttempt = { op: "approve", id, approver, requestId };
  const a = await refusedOnRecord(gw, attempt, () => decidable(gw, id, approver, requestId));
  const now = nowOf(gw);
  // The policy sees the resource as it is now, with the original subject and action, and the
  // requester's limits' usage: an approval that releases a grant is charged to them (a call
  // waiting for approval consumed nothing).
  const answer = await decideAndLog(
    gw,
    {
      subject: a.requester,
      action: a.action,
      resource: a.resource ?? undefined,
      context: {
        requestId,
        source: a.source,
        session: a.session ?? undefined,
        approval: {
          id: a.id,
          approver: { id: approver.id, roles: approver.roles },
          at_ns: now.getTime() * 1_000_000,
        },
        at: now,
      },
      limits: "meter",
      what: "approval",
    },
    (decided) => settleApproval(gw, { a, attempt, reason, now }, decided),
  );
  if (answer instanceof WritError) throw answer;
  return { approval: answer };
}

/** An approver's decision being made. */
interface Approving {
  a: ApprovalRecord;
  attempt: DecisionAttempt;
  reason: string | null;
  now: Date;
}

/**
 * What the policy's answer makes of the request: still pending (its approval did not count), or
 * rejected (gone stale, denied), or approved; the error to answer, or the approved request.
 */
async function settleApproval(
  gw: Gateway,
  p: Approving,
  { decisionId, evaluation, resource, stored, metered }: Decision,
): Promise<Settled<ApprovalRecord | WritError>> {
  const { a, attempt } = p;
  const { decision, revision } = evaluation;
  const approvalId = a.id;
  // Still asking for approval: this approver's approval does not count (self-approval, or a role
  // the policy does not accept). Nothing changes; the attempt is on the record.
  if (decision.decision === "require_approval") {
    const self = attempt.approver.id === a.requester.id;
    const message = self
      ? `the requester cannot approve their own request ${a.id}: the policy does not allow it`
      : `the policy does not accept ${attempt.approver.id}'s approval of ${a.id}`;
    const fix = { suggestedFix: "ask another approver with one of the roles to decide it" };
    return { value: new WritError("forbidden", message, fix), approvalId };
  }
  // The resource moved since the request: never a grant on what the approver did not see.
  const currentRevision = stored?.revision ?? null;
  if (currentRevision !== a.resource_revision) return rejectStale(gw, p, currentRevision);
  if (decision.decision === "deny") {
    await decideOnce(gw, p, { status: "rejected", resolution: "policy_denied", reasons: decision.reasons });
    const why = decision.reasons.map((r) => r.message).join("; ") || "no reason given";
    const message = `the policy denied approval ${a.id}: ${why} (status rejected, resolution policy_denied)`;
    const fix = { suggestedFix: "read the approval's reasons; the requester must change the call" };
    return { value: new WritError("policy_denied", message, fix), approvalId };
  }
  // Allowed: the decision is kept; the grant is minted from it when the requester collects it,
  // bound to the request's exact action and resource (and the revision checked just now).
  contractOf(gw, a); // a tool no longer configured is refused now, not at collection
  // Over a limit: the request stays pending (the approver may approve again later); on record.
  const limited = metered === undefined ? undefined : await chargeLimits(gw, metered, a.action, decision);
  if (limited !== undefined) {
    const reasons: Reason[] = [{ code: limited.category, message: limited.message, visible_to_model: true }];
    return { value: limited, approvalId, outcome: { decision: "deny", reasons, error: limited.category } };
  }
  const release = {
    decision_id: decisionId,
    policy_revision: revision,
    resource_revision: resource.revision ?? null,
    decision,
  };
  const approved = await decideOnce(gw, p, {
    status: "approved",
    resolution: "approved",
    reasons: decision.reasons,
    release,
  });
  return { value: approved, approvalId };
}

/** Rejects a request whose resource moved since it was made (`stale_revision`). */
async function rejectStale(
  gw: Gateway,
  p: Approving,
  currentRevision: number | null,
): Promise<Settled<WritError>> {
  const { a } = p;
  const where = a.resource ? `${a.resource.type}/${a.resource.id}` : "the resource";
  const message = `${where} changed since the request (revision ${a.resource_revision ?? "none"} → ${currentRevision ?? "none"}): propose the call again`;
  const reasons: Reason[] = [{ code: "stale_revision", message, visible_to_model: true }];
  await decideOnce(gw, p, { status: "rejected", resolution: "stale_revision", reasons });
  const error = new WritError(
    "stale_revision",
    `approval ${a.id} was not granted: the resource changed since the request (status rejected, resolution stale_revision)`,
    { suggestedFix: "the requester must read the resource again and propose the call again" },
  );
  return { value: error, approvalId: a.id, outcome: { decision: "deny", reasons, error: "stale_revision" } };
}

/**
 * Moves the request from `pending` (compare-and-swap in the store); when someone else decided it
 * (or it expired) in between, that refusal is logged and thrown.
 */
async function decideOnce(
  gw: Gateway,
  { a, attempt, reason, now }: Approving,
  update: Pick<ApprovalUpdate, "status" | "resolution" | "reasons" | "release">,
): Promise<ApprovalRecord> {
  const decided = await gw.store.decideApproval(
    a.id,
    "pending",
    { ...update, decided_by: attempt.approver.id, decided_at: now.toISOString(), reason },
    now,
  );
  if (!decided) throw await logRefusal(gw, attempt, await lostRace(gw, a.id));
  return decided;
}

/** Rejects a pending request; the reason is required and recorded. */
export async function reject(
  gw: Gateway,
  id: string,
  approver: Subject,
  rawReason: string,
  requestId: string = randomUUID(),
): Promise<ApprovalRecord> {
  const attempt: DecisionAttempt = { op: "reject", id, approver, requestId };
  const { a, reason } = await refusedOnRecord(gw, attempt, async () => {
    const reason = trimmedReason(rawReason);
    if (reason === null) {
      throw new WritError("invalid_argument", "a rejection needs a reason, and this one is empty", {
        fieldErrors: [{ path: "/reason", message: "must contain more than whitespace" }],
        suggestedFix: "say why the request is rejected",
      });
    }
    return { a: await decidable(gw, id, approver, requestId), reason };
  });
  const decided = await decideOnce(
    gw,
    { a, attempt, reason, now: nowOf(gw) },
    {
      status: "rejected",
      resolution: "rejected",
      reasons: [
        {
          code: "approval_rejected",
          message: `rejected by ${approver.id}: ${reason}`,
          visible_to_model: true,
        },
      ],
    },
  );
  await logTransition(gw, decided, {
    from: "pending",
    actor: approver,
    error: null,
    requestId,
  });
  return decided;
}

export function contractOf(gw: Gateway, a: ApprovalRecord) {
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
