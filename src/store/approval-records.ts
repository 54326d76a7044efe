/**
 * Approval requests as a store keeps them (DESIGN section 6): the request the pipeline stores,
 * the record it becomes, its updates, filter and page, and how a stored record is checked when it
 * is read back (every field, with zod) and how a proposed call is keyed. `ApprovalStore`
 * (approvals.ts) is what reads and writes them.
 */
import { z } from "zod";
import { jsonDigest } from "../core/digest.ts";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import {
  type CanonicalAction,
  conditionSchema,
  type PolicyDecision,
  type ProposalSource,
  policyDecisionSchema,
  type Reason,
  reasonSchema,
  type Subject,
} from "../core/types.ts";
import { parseStored } from "./rows.ts";

export const approvalStatuses = ["pending", "approved", "rejected", "expired"] as const;
export type ApprovalStatus = (typeof approvalStatuses)[number];

/** Why a decided approval ended as it did. */
export type ApprovalResolution = "approved" | "rejected" | "policy_denied" | "stale_revision" | "expired";

/** The grant released to the requester of an approved request. */
export interface ApprovalGrant {
  token: string;
  jti: string;
  audience: string;
  expires_at: string;
  max_uses: number;
  /** The arguments the grant is bound to (absent in grants collected by earlier releases). */
  arguments?: Record<string, unknown>;
}

/**
 * What an approval decided, kept until the requester collects the grant: the grant is minted
 * then (and lives its TTL from then), bound to this decision.
 */
export interface ApprovalRelease {
  /** The approving decision (logged when the approver approved): the grant's `dec`. */
  decision_id: string;
  policy_revision: string;
  /** The resource revision the approving decision saw: the grant's `res.rev`. */
  resource_revision: string | null;
  /** The approving decision: its conditions and grant TTL and uses shape the grant. */
  decision: PolicyDecision;
}

/** What identifies a proposed call for approvals: the same call proposed again finds its request. */
export type ApprovalCall = Pick<
  NewApproval,
  "requester" | "tool" | "action" | "resource" | "resource_revision"
>;

/** What the pipeline stores when the policy answers `require_approval` (DESIGN section 6). */
export interface NewApproval {
  id: string;
  /** The requester, as verified when the call was proposed; the policy re-runs with it. */
  requester: Subject;
  /** The contract (canonical name and version) and the model-facing tool name. */
  tool: { name: string; version: string; call_name: string };
  /** The canonical action: validated arguments and their digest. */
  action: CanonicalAction;
  resource: { type: string; id: string } | null;
  /** The resource's revision when the call was proposed (null: unknown resource). */
  resource_revision: number | null;
  policy_revision: string;
  /** The decision that asked for the approval. */
  decision_id: string;
  source: ProposalSource;
  session: string | null;
  approver_roles: string[];
  /** ISO 8601. */
  requested_at: string;
  /** ISO 8601. */
  expires_at: string;
}

export interface ApprovalRecord extends NewApproval {
  status: ApprovalStatus;
  resolution: ApprovalResolution | null;
  decided_by: string | null;
  decided_at: string | null;
  /** The approver's reason (required to reject). */
  reason: string | null;
  /** The reasons of the deciding step (policy reasons, stale revision, expiry). */
  reasons: Reason[];
  grant_jti: string | null;
  /** Set when the requester collected the grant (at most once). */
  grant: ApprovalGrant | null;
  /** Set when approved: what the grant is minted from when it is collected. */
  release: ApprovalRelease | null;
}

export interface ApprovalUpdate {
  status: Exclude<ApprovalStatus, "pending">;
  resolution: ApprovalResolution;
  decided_by: string | null;
  decided_at: string;
  reason: string | null;
  reasons: Reason[];
  grant?: ApprovalGrant | null;
  release?: ApprovalRelease | null;
}

export interface ApprovalFilter {
  status?: ApprovalStatus;
  /** Required: approvals are listed one tenant at a time. */
  tenant: string;
  /**
   * Who may see: approvals requested by `requester`, or (when given) any whose approver_roles
   * include one of `approverRoles`. Either alone narrows to that set; both together: the union.
   */
  requester?: string;
  approverRoles?: string[];
}

export interface ApprovalPage {
  approvals: ApprovalRecord[];
  next_cursor?: string;
}

/** What `openOrCreateApproval` found or stored. */
export interface ApprovalOpening {
  record: ApprovalRecord;
  /** True when this call stored the request; false when an open one was there already. */
  created: boolean;
}

const subjectSchema = z.object({
  id: z.string(),
  tenant: z.string(),
  roles: z.array(z.string()),
  scopes: z.array(z.string()),
  issuer: z.string(),
  claims: z.record(z.string(), z.unknown()),
});

const actionSchema = z.object({
  name: z.string(),
  version: z.string(),
  side_effect: z.enum(["none", "reversible", "committing"]),
  idempotency: z.enum(["natural", "keyed", "none"]),
  data_classification: z.string(),
  args: z.record(z.string(), z.unknown()),
  args_digest: z.string(),
});

/** A stored approval record, every field checked: what createApproval/decideApproval wrote. */
const approvalRecordSchema = z.object({
  id: z.string().min(1),
  requester: subjectSchema,
  tool: z.object({ name: z.string(), version: z.string(), call_name: z.string() }),
  action: actionSchema,
  resource: z.object({ type: z.string(), id: z.string() }).nullable(),
  resource_revision: z.number().nullable(),
  policy_revision: z.string(),
  decision_id: z.string(),
  source: z.enum(["openai", "anthropic", "mcp", "canonical"]),
  session: z.string().nullable(),
  approver_roles: z.array(z.string()),
  requested_at: z.string(),
  expires_at: z.string(),
  status: z.enum(approvalStatuses),
  resolution: z.enum(["approved", "rejected", "policy_denied", "stale_revision", "expired"]).nullable(),
  decided_by: z.string().nullable(),
  decided_at: z.string().nullable(),
  reason: z.string().nullable(),
  reasons: z.array(reasonSchema),
  grant_jti: z.string().nullable(),
  grant: z
    .object({
      token: z.string(),
      jti: z.string(),
      audience: z.string(),
      expires_at: z.string(),
      max_uses: z.number(),
      // Absent in grants collected before answers named their arguments.
      arguments: z.record(z.string(), z.unknown()).optional(),
    })
    .nullable(),
  // Absent in records approved before grants were minted on collection (they hold their grant).
  release: z
    .object({
      decision_id: z.string(),
      policy_revision: z.string(),
      resource_revision: z.string().nullable(),
      decision: policyDecisionSchema.extend({ conditions: z.array(conditionSchema) }),
    })
    .nullable()
    .default(null),
});

// The schema's output must stay assignable to the stored type.
const _approvalMatchesType = (record: z.output<typeof approvalRecordSchema>): ApprovalRecord => record;
void _approvalMatchesType;

export const approvalFilterSchema = z
  .object({
    status: z.enum(approvalStatuses).optional(),
    tenant: z.string().min(1),
    requester: z.string().optional(),
    approverRoles: z.array(z.string()).optional(),
  })
  .strict();

/** An approval row as both stores select it: its seq and its record (JSON text or jsonb). */
export const approvalRowSchema = z.object({ seq: z.number().int().positive(), record: z.unknown() });

export function approvalOfJson(json: unknown, seq: number): ApprovalRecord {
  // The record is what createApproval/decideApproval wrote; its key fields are checked here.
  return parseStored(approvalRecordSchema, json, `approval row ${seq}`);
}

export function duplicateApproval(id: string, cause: unknown): WritError {
  return new WritError("conflict", `approval ${id} already exists`, {
    suggestedFix: "use a fresh approval id (crypto.randomUUID())",
    cause,
  });
}

export function parseApprovalFilter(filter: unknown): z.output<typeof approvalFilterSchema> {
  const parsed = approvalFilterSchema.safeParse(filter);
  if (!parsed.success) {
    throw new WritError("invalid_argument", "the approval filter is invalid", {
      fieldErrors: fieldErrorsFromZod(parsed.error, "/filter"),
      suggestedFix:
        "name the tenant, and use only status (pending|approved|rejected|expired), requester and approverRoles besides",
    });
  }
  return parsed.data;
}

/** A new approval's pending record and its expiry in milliseconds; refuses an invalid request. */
export function pendingApproval(request: NewApproval): { record: ApprovalRecord; expiresAtMs: number } {
  const expiresAtMs = new Date(request.expires_at).getTime();
  if (request.id === "" || Number.isNaN(expiresAtMs) || request.approver_roles.some((r) => r === "")) {
    throw new WritError("invalid_argument", "the approval request is invalid", {
      suggestedFix: "give an id, an ISO 8601 expires_at and non-empty approver roles",
    });
  }
  return {
    expiresAtMs,
    record: {
      ...request,
      status: "pending",
      resolution: null,
      decided_by: null,
      decided_at: null,
      reason: null,
      reasons: [],
      grant_jti: null,
      grant: null,
      release: null,
    },
  };
}

/**
 * The key of a proposed call among approvals (column `approvals.call_key`): the requester and
 * tenant, the contract, the action and its argument digest, the resource and its revision.
 */
export function approvalCallKey(call: ApprovalCall): string {
  return jsonDigest({
    tenant: call.requester.tenant,
    requester: call.requester.id,
    tool: { name: call.tool.name, version: call.tool.version },
    action: { name: call.action.name, version: call.action.version, args_digest: call.action.args_digest },
    resource: call.resource,
    resource_revision: call.resource_revision,
  });
}

/** The fields a decision changes in an approval record. */
export function decidedFields(update: ApprovalUpdate): Partial<ApprovalRecord> {
  const { grant, release, ...rest } = update;
  return { ...rest, grant: grant ?? null, grant_jti: grant?.jti ?? null, release: release ?? null };
}
