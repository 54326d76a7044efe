/**
 * The approvals queue: pending requests the signed-in approver may decide (their tenant, one of
 * the request's approver roles), each with what the log holds about the call (its redacted
 * arguments and the policy's reasons), and approve / reject forms (a reason is required to reject).
 */
import type { FC } from "hono/jsx";
import type { ApprovalRecord, DecisionLogEntry } from "../store/types.ts";
import { Layout } from "./layout.tsx";
import { CONSOLE_PATH, type Viewer } from "./session.ts";

export interface PendingApproval {
  approval: ApprovalRecord;
  /** The decision-log entry of the decision that asked for approval (what the log shows). */
  entry: DecisionLogEntry | undefined;
}

/** The call's arguments as the log stores them (redacted), never the unredacted request. */
function loggedArguments(entry: DecisionLogEntry | undefined): string {
  if (entry === undefined) return "(the decision is not in the log)";
  if (entry.erased.includes("/action/args")) return "(erased from the log by redaction)";
  const input = entry.input;
  if (typeof input !== "object" || input === null || !("action" in input)) return "(not recorded)";
  const action = input.action;
  if (typeof action !== "object" || action === null || !("args" in action)) return "(not recorded)";
  return JSON.stringify(action.args, null, 2);
}

const ApprovalCard: FC<{ item: PendingApproval; viewer: Viewer }> = ({
  item: { approval: a, entry },
  viewer,
}) => (
  <section class="card" id={`approval-${a.id}`} data-approval-id={a.id}>
    <h2>
      {a.requester.id} asks to run {a.tool.name}
      {a.resource ? ` on ${a.resource.type}/${a.resource.id}` : ""}
    </h2>
    <dl>
      <dt>Requester</dt>
      <dd>
        {a.requester.id} (tenant {a.requester.tenant}; roles {a.requester.roles.join(", ") || "none"})
      </dd>
      <dt>Tool</dt>
      <dd>
        {a.tool.name} v{a.tool.version} <span class="muted">(called as {a.tool.call_name})</span>
      </dd>
      <dt>Resource</dt>
      <dd>
        {a.resource ? `${a.resource.type}/${a.resource.id}` : "none"}
        {a.resource_revision === null ? "" : ` at revision ${a.resource_revision}`}
      </dd>
      <dt>Policy revision</dt>
      <dd>
        <code>{a.policy_revision}</code>
      </dd>
      <dt>Why approval</dt>
      <dd>{entry?.reasons.map((r) => r.message).join("; ") || "—"}</dd>
      <dt>Approver roles</dt>
      <dd>{a.approver_roles.join(", ")}</dd>
      <dt>Requested</dt>
      <dd>
        {a.requested_at} · expires {a.expires_at}
      </dd>
      <dt>Decision</dt>
      <dd>
        {viewer.canReview ? (
          <a href={`/console/decisions/${encodeURIComponent(a.decision_id)}`}>{a.decision_id}</a>
        ) : (
          <code>{a.decision_id}</code>
        )}
      </dd>
    </dl>
    <h2>Arguments (as logged)</h2>
    <pre>{loggedArguments(entry)}</pre>
    <div class="charts">
      <form method="post" action={`/console/approvals/${encodeURIComponent(a.id)}/approve`}>
        <input type="hidden" name="csrf" value={viewer.csrf} />
        <label>
          Reason (optional)
          <br />
          <input name="reason" size={30} maxlength={2000} />
        </label>{" "}
        <button type="submit">Approve</button>
      </form>
      <form method="post" action={`/console/approvals/${encodeURIComponent(a.id)}/reject`}>
        <input type="hidden" name="csrf" value={viewer.csrf} />
        <label>
          Reason (required)
          <br />
          <input name="reason" size={30} maxlength={2000} required />
        </label>{" "}
        <button class="danger" type="submit">
          Reject
        </button>
      </form>
    </div>
  </section>
);

export interface DecidedNotice {
  id: string;
  outcome: "approved" | "rejected";
}

export const ApprovalsPage: FC<{
  viewer: Viewer;
  pending: PendingApproval[];
  decided?: DecidedNotice | undefined;
  /** Where the next (older) page of requests starts, if there is one. */
  nextCursor?: string | undefined;
}> = ({ viewer, pending, decided, nextCursor }) => (
  <Layout title="Approvals" viewer={viewer}>
    <h1>Pending approvals</h1>
    {decided && (
      <div class="notice" data-decided={decided.outcome}>
        Approval {decided.id} {decided.outcome}
        {decided.outcome === "approved"
          ? ": the policy ran again and the grant was released to the requester."
          : "."}
      </div>
    )}
    {pending.length === 0 ? (
      <section>
        <p>Nothing is waiting for you. Requests appear here when the policy asks for one of your roles.</p>
      </section>
    ) : (
      pending.map((item) => <ApprovalCard item={item} viewer={viewer} />)
    )}
    {nextCursor && (
      <p>
        <a href={`${CONSOLE_PATH}/approvals?cursor=${encodeURIComponent(nextCursor)}`} data-next-page>
          Older requests »
        </a>
      </p>
    )}
  </Layout>
);
