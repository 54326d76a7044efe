/**
 * What every `Store` implementation checks the same way: arguments coming in (resources, decision
 * entries, approval requests, grant uses) and rows coming back out (parsed with zod, never trusted
 * because they came from our own database).
 */
import { z } from "zod";
import { canonicalJson, jsonDigest } from "../core/digest.ts";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import { conditionSchema, policyDecisionSchema, reasonSchema } from "../core/types.ts";
import { UnreadableEntryError } from "./errors.ts";
import {
  decisionBodySchema,
  decisionRowSchema,
  entryFromBody,
  resourceAttributesSchema,
  resourceRowSchema,
} from "./schema.ts";
import {
  type ApprovalCall,
  type ApprovalRecord,
  type ApprovalUpdate,
  approvalStatuses,
  type DecisionLogEntry,
  type GrantUse,
  type NewApproval,
  type StoredResource,
} from "./types.ts";

export const resourceWriteSchema = z
  .object({
    type: z.string().min(1),
    id: z.string().min(1),
    owner: z.string(),
    tenant: z.string(),
    attributes: z.record(z.string(), z.unknown()),
  })
  .strict();

export const usesRowSchema = z.object({ uses: z.number().int().positive() });
export const revisionRowSchema = z.object({ revision: z.number().int().positive() });
export const grantRowSchema = z.object({
  uses: z.number().int(),
  max_uses: z.number().int(),
  expires_at: z.number().int(),
});
export const idempotencyRowSchema = z.object({
  request_digest: z.string(),
  state: z.enum(["pending", "done"]),
  outcome: z.string().nullable(),
  expires_at: z.number().int(),
});
export const versionRowSchema = z.object({ version: z.number().int() });
export const lastRowSchema = z.object({ seq: z.number().int().positive(), hash: z.string() });

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

export function validDate(date: Date): boolean {
  return date instanceof Date && !Number.isNaN(date.getTime());
}

/** JSON text of a value, or `invalid_argument` naming where it is not JSON. */
export function jsonText(value: unknown, pointer: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new WritError("invalid_argument", `${pointer} is not JSON: ${String(error)}`, {
      fieldErrors: [{ path: pointer, message: "not serializable as JSON" }],
      suggestedFix: "pass plain JSON data (no cycles, no BigInt)",
      cause: error,
    });
  }
  if (text === undefined) {
    throw new WritError("invalid_argument", `${pointer} is not JSON`, {
      fieldErrors: [{ path: pointer, message: "not serializable as JSON" }],
      suggestedFix: "pass plain JSON data",
    });
  }
  return text;
}

export function parseStored<T>(schema: z.ZodType<T>, row: unknown, what: string): T {
  const parsed = schema.safeParse(row);
  if (!parsed.success) {
    throw new WritError(
      "internal",
      `${what} in the database is malformed: ${z.prettifyError(parsed.error)}`,
      {
        suggestedFix: "the database was changed outside Writ or by a newer release: restore it from a backup",
      },
    );
  }
  return parsed.data;
}

/** A resource row (`attributes` as JSON text). */
export function resourceOf(row: unknown): StoredResource {
  const r = parseStored(resourceRowSchema, row, "a resource row");
  let attributes: unknown;
  try {
    attributes = JSON.parse(r.attributes);
  } catch {
    attributes = undefined;
  }
  return {
    type: r.type,
    id: r.id,
    owner: r.owner,
    tenant: r.tenant,
    revision: r.revision,
    attributes: parseStored(
      resourceAttributesSchema,
      attributes,
      `the attributes of resource ${r.type}/${r.id}`,
    ),
    updated_at: r.updated_at,
  };
}

/** An approval record, already parsed from JSON; `seq` names the row in messages. */
/** An approval row as both stores select it: its seq and its record (JSON text or jsonb). */
export const approvalRowSchema = z.object({ seq: z.number().int().positive(), record: z.unknown() });

export function approvalOfJson(json: unknown, seq: number): ApprovalRecord {
  // The record is what createApproval/decideApproval wrote; its key fields are checked here.
  return parseStored(approvalRecordSchema, json, `approval row ${seq}`);
}

/**
 * A decision row (`entry` as the JSON text the hash covers). The text must be exactly the
 * canonical JSON (RFC 8785) of what it parses to, as the chain wrote it: then the hash covers the
 * stored bytes themselves, and every reader of them agrees on what they say. Text that parses
 * to the same value but is spelled otherwise (a key repeated, which SQLite's `json_extract`
 * reads first and JSON.parse last; keys reordered; whitespace; escapes) is refused as
 * unreadable, never read as the value it happens to parse to.
 */
export function entryOf(row: unknown): DecisionLogEntry {
  const r = parseStored(decisionRowSchema, row, "a decision row");
  let json: unknown;
  try {
    json = JSON.parse(r.entry);
  } catch (error) {
    throw new UnreadableEntryError(r.seq, null, "its JSON does not parse", error);
  }
  const decisionId = () => {
    const id = z.object({ decision_id: z.string() }).safeParse(json);
    return id.success ? id.data.decision_id : null;
  };
  if (canonicalJson(json) !== r.entry) {
    throw new UnreadableEntryError(
      r.seq,
      decisionId(),
      "its text is not the canonical JSON the chain wrote (a key repeated or reordered, or a value respelled)",
    );
  }
  const body = decisionBodySchema.safeParse(json);
  if (!body.success) throw new UnreadableEntryError(r.seq, decisionId(), z.prettifyError(body.error));
  return { ...entryFromBody(r.seq, body.data, r.prev_hash), hash: r.hash };
}

export function duplicateDecision(decisionId: string, cause: unknown): WritError {
  return new WritError("conflict", `decision ${decisionId} is already in the log`, {
    suggestedFix: "log each decision once, with a fresh decision_id (crypto.randomUUID())",
    cause,
  });
}

export function duplicateApproval(id: string, cause: unknown): WritError {
  return new WritError("conflict", `approval ${id} already exists`, {
    suggestedFix: "use a fresh approval id (crypto.randomUUID())",
    cause,
  });
}

/** Refuses grant-use arguments that cannot be right. */
export function checkGrantUse(use: GrantUse, now: Date): void {
  const { jti, maxUses, expiresAt, resource } = use;
  if (
    jti === "" ||
    !Number.isSafeInteger(maxUses) ||
    maxUses < 1 ||
    !validDate(expiresAt) ||
    !validDate(now) ||
    (resource !== undefined &&
      (resource.type === "" || (resource.revision !== null && !Number.isSafeInteger(resource.revision))))
  ) {
    throw new WritError(
      "invalid_argument",
      "consumeGrant needs a jti, a positive integer maxUses, valid dates and, when bound, a resource type and an integer (or null) revision",
      {
        suggestedFix:
          "pass the grant's jti, its max claim (at least 1), its exp as a Date and its res claim's type, id and revision",
      },
    );
  }
}

export function checkExpectedRevision(expectedRevision: number): void {
  if (!Number.isSafeInteger(expectedRevision)) {
    throw new WritError(
      "invalid_argument",
      `expectedRevision must be an integer, got ${String(expectedRevision)}`,
      {
        fieldErrors: [{ path: "/expectedRevision", message: "expected an integer" }],
        suggestedFix: "pass the revision read with getResource",
      },
    );
  }
}

/** A checked resource write and its attributes as JSON text. */
export function parseResourceWrite(resource: unknown): {
  resource: z.output<typeof resourceWriteSchema>;
  attributes: string;
} {
  const parsed = resourceWriteSchema.safeParse(resource);
  if (!parsed.success) {
    throw new WritError("invalid_argument", "the resource is invalid", {
      fieldErrors: fieldErrorsFromZod(parsed.error, "/resource"),
      suggestedFix: "give a non-empty type and id, an owner, a tenant and an attributes object",
    });
  }
  return { resource: parsed.data, attributes: jsonText(parsed.data.attributes, "/resource/attributes") };
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

/**
 * The versions listed in `schema_migrations`; refuses a database that a newer Writ migrated
 * (`suggestedFix` says which release to run).
 */
export function appliedVersions(
  rows: readonly unknown[],
  migrations: readonly { version: number }[],
  location: string,
  suggestedFix: string,
): Set<number> {
  const applied = new Set(
    rows.map((row) => parseStored(versionRowSchema, row, "a schema_migrations row").version),
  );
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const newest = Math.max(0, ...applied);
  if (newest > known) {
    throw new WritError(
      "internal",
      `the database at ${location} has schema version ${newest}, newer than this Writ knows (${known})`,
      { suggestedFix },
    );
  }
  return applied;
}
