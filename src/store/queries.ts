/**
 * The SQL both stores run, written once with `sql` (see sql.ts) and rendered per dialect: the
 * decision filter and approval filter as WHERE clauses, keyset paging (newest first, `seq <`
 * the cursor), and the statements of grant uses and idempotency claims that each store runs
 * inside its own transaction or retry.
 */
import type { Dialect } from "./dialect.ts";
import { encodeCursor } from "./paging.ts";
import {
  approvalCallKey,
  grantRowSchema,
  idempotencyRowSchema,
  jsonText,
  parseStored,
  pendingApproval,
  revisionRowSchema,
} from "./rows.ts";
import { raw, type Sql, sql, where } from "./sql.ts";
import type {
  ApprovalCall,
  ApprovalFilter,
  DecisionFilter,
  GrantConsumption,
  GrantUse,
  IdempotencyClaim,
  NewApproval,
} from "./types.ts";

export const RESOURCE_COLUMNS = raw("type, id, owner, tenant, revision, attributes, updated_at");
export const DECISION_COLUMNS = raw("seq, entry, prev_hash, hash");
export const CHECKPOINT_COLUMNS = raw("seq, hash, time, kid, jws");

/** A page of `filter`'s matches, newest first, before the cursor's seq: one row more than `size`. */
export function decisionsQuery(
  dialect: Dialect,
  filter: DecisionFilter,
  size: number,
  before: number | undefined,
): Sql {
  const conditions: Sql[] = [];
  const equal = (column: string, value: string | undefined) => {
    if (value !== undefined) conditions.push(sql`${raw(column)} = ${value}`);
  };
  equal("subject", filter.subject);
  equal("tenant", filter.tenant);
  equal("action", filter.action);
  equal("decision", filter.decision);
  equal("resource_type", filter.resourceType);
  equal("resource_id", filter.resourceId);
  if (filter.path !== undefined) conditions.push(sql`${dialect.entryPath} = ${filter.path}`);
  if (filter.reason !== undefined) {
    // The side table narrows by index; the entry itself confirms.
    conditions.push(
      sql`seq IN (SELECT seq FROM decision_reasons WHERE code = ${filter.reason})
         AND ${dialect.entryHasReason(filter.reason)}`,
    );
  }
  if (filter.run !== undefined) conditions.push(dialect.entryInRun(filter.run));
  const time = raw(dialect.timestampColumn);
  if (filter.since !== undefined) conditions.push(sql`${time} >= ${filter.since}`);
  if (filter.until !== undefined) conditions.push(sql`${time} < ${filter.until}`);
  if (before !== undefined) conditions.push(sql`seq < ${before}`);
  return sql`SELECT ${DECISION_COLUMNS} FROM decisions ${where(conditions)}
      ORDER BY seq DESC LIMIT ${size + 1}`;
}

/** A page of approvals, newest first, before the cursor's seq: one row more than `size`. */
export function approvalsQuery(
  dialect: Dialect,
  filter: ApprovalFilter,
  size: number,
  before: number | undefined,
): Sql {
  const conditions: Sql[] = [];
  if (filter.status !== undefined) conditions.push(sql`status = ${filter.status}`);
  conditions.push(sql`tenant = ${filter.tenant}`);
  const who: Sql[] = [];
  if (filter.requester !== undefined) who.push(sql`requester = ${filter.requester}`);
  if (filter.approverRoles !== undefined) who.push(dialect.approverRolesOverlap(filter.approverRoles));
  const [first, second] = who;
  if (first !== undefined)
    conditions.push(second === undefined ? sql`(${first})` : sql`(${first} OR ${second})`);
  if (before !== undefined) conditions.push(sql`seq < ${before}`);
  return sql`SELECT seq, record FROM approvals ${where(conditions)}
      ORDER BY seq DESC LIMIT ${size + 1}`;
}

/**
 * The newest request still open for a call (pending, or approved and its grant not collected;
 * not expired at `nowMs`): its row (`seq, record`), if any.
 */
export function openApprovalQuery(call: ApprovalCall, nowMs: number): Sql {
  return sql`SELECT seq, record FROM approvals
       WHERE call_key = ${approvalCallKey(call)} AND expires_at > ${nowMs}
         AND (status = 'pending' OR (status = 'approved' AND grant_jti IS NULL))
       ORDER BY seq DESC LIMIT 1`;
}

/** Stores a new request as pending (refused as invalid first): its row (`seq, record`). */
export function insertApprovalQuery(dialect: Dialect, request: NewApproval): Sql {
  const { record, expiresAtMs } = pendingApproval(request);
  const text = jsonText(record, "/approval");
  const roles = dialect.textArray(request.approver_roles);
  return sql`INSERT INTO approvals (id, tenant, requester, status, approver_roles, expires_at, call_key, record)
         VALUES (${request.id}, ${request.requester.tenant}, ${request.requester.id}, 'pending', ${roles}, ${expiresAtMs}, ${approvalCallKey(request)}, ${text})
         RETURNING seq, record`;
}

/** The first `size` rows, and a cursor after the last of them when the query found more. */
export function pageOf<T>(
  rows: readonly unknown[],
  size: number,
  decode: (row: unknown) => T,
  seqOf: (item: T) => number,
  cursorOf: (seq: number) => string = encodeCursor,
): { items: T[]; next_cursor?: string } {
  const items = rows.slice(0, size).map(decode);
  const last = items.at(-1);
  return rows.length > size && last !== undefined ? { items, next_cursor: cursorOf(seqOf(last)) } : { items };
}

/**
 * One more use of a grant, unless it is used up or expired, or (when bound) its resource is no
 * longer at the revision the grant was decided on: returns `uses` when it counted. The binding is
 * a condition of the same statement, so the check and the count are one atomic step.
 */
export function grantUseQuery(use: GrantUse, now: Date): Sql {
  const { jti, maxUses } = use;
  const expiresAt = use.expiresAt.getTime();
  const counted = sql`ON CONFLICT (jti) DO UPDATE SET uses = grant_uses.uses + 1
         WHERE grant_uses.uses < grant_uses.max_uses AND grant_uses.expires_at > ${now.getTime()}
           AND ${use.resource === undefined ? sql`1 = 1` : resourceAtRevision(use.resource)}
       RETURNING uses`;
  if (use.resource === undefined) {
    return sql`INSERT INTO grant_uses (jti, uses, max_uses, expires_at) VALUES (${jti}, 1, ${maxUses}, ${expiresAt})
       ${counted}`;
  }
  // INSERT … SELECT (typed: PostgreSQL infers no parameter type from a SELECT list) WHERE bound.
  return sql`INSERT INTO grant_uses (jti, uses, max_uses, expires_at)
       SELECT CAST(${jti} AS TEXT), 1, CAST(${maxUses} AS INTEGER), CAST(${expiresAt} AS BIGINT)
       WHERE ${resourceAtRevision(use.resource)}
       ${counted}`;
}

/** True while the resource is at `revision` (null: while it does not exist). */
function resourceAtRevision(r: NonNullable<GrantUse["resource"]>): Sql {
  return r.revision === null
    ? sql`NOT EXISTS (SELECT 1 FROM resources WHERE type = ${r.type} AND id = ${r.id})`
    : sql`EXISTS (SELECT 1 FROM resources WHERE type = ${r.type} AND id = ${r.id} AND revision = ${r.revision})`;
}

export function grantRowQuery(jti: string): Sql {
  return sql`SELECT uses, max_uses, expires_at FROM grant_uses WHERE jti = ${jti}`;
}

export function resourceRevisionQuery(type: string, id: string): Sql {
  return sql`SELECT revision FROM resources WHERE type = ${type} AND id = ${id}`;
}

/**
 * Why a use was refused, from the grant's row (absent: never counted) and, for a bound use, the
 * resource's revision row (absent: no such resource), both read after the refusal. A grant used
 * up or expired says so first; a grant refused for neither was refused for its revision.
 */
export function grantRefusal(
  use: GrantUse,
  grantRow: unknown,
  revisionRow: unknown,
  now: Date,
): Extract<GrantConsumption, { ok: false }> {
  if (grantRow !== undefined) {
    const stored = parseStored(grantRowSchema, grantRow, "a grant use");
    if (stored.expires_at <= now.getTime()) return { ok: false, reason: "expired" };
    if (stored.uses >= stored.max_uses || use.resource === undefined)
      return { ok: false, reason: "exhausted" };
  } else if (use.resource === undefined) {
    // Refused, yet no row: only an expired row is ever deleted.
    return { ok: false, reason: "expired" };
  }
  const revision =
    revisionRow === undefined
      ? null
      : parseStored(revisionRowSchema, revisionRow, "a resource revision").revision;
  return { ok: false, reason: "stale_revision", revision };
}

/** Claims a key unless a live claim holds it: returns a row when it claimed. */
export function claimQuery(
  subject: string,
  key: string,
  requestDigest: string,
  expiresAt: Date,
  now: Date,
): Sql {
  return sql`INSERT INTO idempotency (subject, key, request_digest, state, outcome, created_at, expires_at)
       VALUES (${subject}, ${key}, ${requestDigest}, 'pending', NULL, ${now.getTime()}, ${expiresAt.getTime()})
       ON CONFLICT (subject, key) DO UPDATE SET request_digest = excluded.request_digest,
         state = 'pending', outcome = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
         WHERE idempotency.expires_at <= ${now.getTime()}
       RETURNING 1`;
}

export function claimRowQuery(subject: string, key: string): Sql {
  return sql`SELECT request_digest, state, outcome, expires_at FROM idempotency WHERE subject = ${subject} AND key = ${key}`;
}

/** The claim another request holds, from its row. */
export function heldClaim(row: unknown): IdempotencyClaim {
  const held = parseStored(idempotencyRowSchema, row, "an idempotency key");
  if (held.state === "pending") return { state: "pending", request_digest: held.request_digest };
  return {
    state: "done",
    request_digest: held.request_digest,
    outcome: held.outcome === null ? null : JSON.parse(held.outcome),
  };
}
