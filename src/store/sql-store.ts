/**
 * What the SQLite and PostgreSQL stores share: every `Store` method whose SQL is the same in both
 * (reads, single-statement writes, filtered pages), written once over two primitives each store
 * provides: `rows` (a statement's rows) and `execute` (how many rows it changed). A store keeps
 * what differs: connecting, migrating, and the methods that lock or retry (grant uses, the
 * decision log's append, approval decisions, idempotency claims).
 */

import { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import type { KeySetStorage } from "../grants/key-storage.ts";
import { HEAD_SQL } from "./chain.ts";
import { SqlKeySetStorage } from "./checkpoint-key-set.ts";
import {
  inactiveSession,
  insertSessionQuery,
  pruneSessionsQuery,
  revokeSessionQuery,
  sessionOf,
  sessionStateQuery,
  useSessionQuery,
} from "./console-sessions.ts";
import type { Dialect } from "./dialect.ts";
import { UnreadableEntryError } from "./errors.ts";
import { claimGroupLeaseQuery, releaseGroupLeaseQuery } from "./group-leases.ts";
import { type LimitBucket, usageQuery, usageRows, usedNow } from "./limit-usage.ts";
import {
  advanceShippingQuery,
  claimShippingQuery,
  releaseShippingQuery,
  shippingStateOf,
  shippingStateQuery,
} from "./log-shipping.ts";
import {
  decodeCursor,
  decodeScopedCursor,
  encodeScopedCursor,
  normalizeFilter,
  pageSize,
  readBatchSize,
} from "./paging.ts";
import {
  archiveRevisionQuery,
  revisionQuery,
  revisionRecordOf,
  revisionsPageOf,
  revisionsQuery,
} from "./policy-revisions.ts";
import {
  approvalsQuery,
  CHECKPOINT_COLUMNS,
  DECISION_COLUMNS,
  decisionsQuery,
  insertApprovalQuery,
  openApprovalQuery,
  pageOf,
  RESOURCE_COLUMNS,
} from "./queries.ts";
import {
  approvalOfJson,
  approvalRowSchema,
  checkExpectedRevision,
  decidedFields,
  duplicateApproval,
  entryOf,
  jsonText,
  lastRowSchema,
  parseApprovalFilter,
  parseResourceWrite,
  parseStored,
  resourceOf,
} from "./rows.ts";
import { hashSchema } from "./schema.ts";
import { join, raw, type Sql, sql } from "./sql.ts";
import type {
  ApprovalCall,
  ApprovalFilter,
  ApprovalGrant,
  ApprovalOpening,
  ApprovalPage,
  ApprovalRecord,
  ApprovalUpdate,
  ChainLink,
  ConsoleSession,
  ConsoleSessionUse,
  DecisionFilter,
  DecisionLogEntry,
  DecisionPage,
  EntryAppend,
  LogShippingClaim,
  LogShippingState,
  NewApproval,
  NewConsoleSession,
  NewDecisionEntry,
  NewPolicyRevision,
  PolicyRevisionPage,
  PolicyRevisionRecord,
  ResourceWrite,
  ScopedResourceWrite,
  Store,
  StoredCheckpoint,
  StoredResource,
  TenantScope,
} from "./types.ts";

function chainLinkOf({ seq, prev_hash, hash }: DecisionLogEntry): ChainLink {
  return { seq, prev_hash, hash };
}

/** Whether `tenant` (a stored row's, possibly null) is within `scope`. */
function inScope(scope: TenantScope, tenant: string | null): boolean {
  return "allTenants" in scope || scope.tenant === tenant;
}

/**
 * An entry a scoped query found, confirmed against the entry itself: the query filtered on the
 * generated `tenant` column, which must agree with the entry it was read from (entryOf refuses
 * text on which they could differ); one that does not is refused, never shown to another tenant.
 */
function entryInScope(scope: TenantScope, entry: DecisionLogEntry): DecisionLogEntry {
  if (inScope(scope, entry.tenant)) return entry;
  throw new UnreadableEntryError(entry.seq, entry.decision_id, "its tenant column disagrees with the entry");
}

/** What each dialect's store adds to this class to be a whole `Store`. */
type DialectMethods =
  | "migrate"
  | "close"
  | "consumeGrant"
  | "appendDecisions"
  | "decideApproval"
  | "claimIdempotency"
  | "consumeLimits";

const checkpointSchema = z
  .object({
    seq: z.number().int().positive(),
    hash: hashSchema,
    time: z.iso.datetime({ offset: true }),
    kid: z.string().min(1),
    jws: z.string().min(1),
  })
  .strict();

const cancellationRowSchema = z.object({ key: z.string(), reason: z.string().nullable() });

export abstract class SqlStore implements Omit<Store, DialectMethods> {
  /** Where the data is, for messages (a file path, or a URL without its password). */
  abstract readonly location: string;
  protected readonly dialect: Dialect;
  /** The clock for `updated_at` and grant expiry. */
  protected readonly clock: () => Date;

  constructor(dialect: Dialect, clock: (() => Date) | undefined) {
    this.dialect = dialect;
    this.clock = clock ?? (() => new Date());
  }

  /** The rows a statement returns; failures as `WritError`s that say they happened trying `what`. */
  protected abstract rows(what: string, query: Sql): Promise<unknown[]>;
  /** Runs a statement that returns no rows; how many rows it changed. */
  protected abstract execute(what: string, query: Sql): Promise<number>;

  /** The dialect's append, under its own lock (the shared `appendDecision` calls it). */
  abstract appendDecisions(entries: readonly NewDecisionEntry[]): Promise<DecisionLogEntry[]>;

  // ------------------------------------------------------------------------------ resources

  async getResource(type: string, id: string): Promise<StoredResource | undefined> {
    const [row] = await this.rows(
      "read a resource",
      sql`SELECT ${RESOURCE_COLUMNS} FROM resources WHERE type = ${type} AND id = ${id}`,
    );
    return row === undefined ? undefined : resourceOf(row);
  }

  async putResource(resource: ResourceWrite): Promise<StoredResource> {
    return resourceOf(await this.#upsertResource(resource, raw("")));
  }

  /** Inserts, or replaces a row when `guard` (a ` WHERE …` or nothing) holds: the row, or undefined. */
  async #upsertResource(resource: ResourceWrite, guard: Sql): Promise<unknown> {
    const { resource: r, attributes } = parseResourceWrite(resource);
    const [row] = await this.rows(
      "write a resource",
      sql`INSERT INTO resources (${RESOURCE_COLUMNS})
       VALUES (${r.type}, ${r.id}, ${r.owner}, ${r.tenant}, 1, ${attributes}, ${this.clock().toISOString()})
       ON CONFLICT (type, id) DO UPDATE SET owner = excluded.owner, tenant = excluded.tenant,
         attributes = excluded.attributes, updated_at = excluded.updated_at, revision = resources.revision + 1
         ${guard}
       RETURNING ${RESOURCE_COLUMNS}`,
    );
    return row;
  }

  async getResourceIn(scope: TenantScope, type: string, id: string): Promise<StoredResource | undefined> {
    const stored = await this.getResource(type, id);
    return stored !== undefined && inScope(scope, stored.tenant) ? stored : undefined;
  }

  async putResourceIn(scope: TenantScope, resource: ResourceWrite): Promise<ScopedResourceWrite> {
    if ("tenant" in scope && scope.tenant !== resource.tenant) {
      throw new WritError(
        "forbidden",
        `a caller of tenant ${scope.tenant} writes resources of that tenant only`,
        {
          suggestedFix: "omit tenant in the body, or set it to your own tenant",
        },
      );
    }
    const previous = await this.getResource(resource.type, resource.id);
    const expected = previous?.revision ?? 0;
    // One statement: the insert, or the update of a row still at the revision read above and (in
    // a tenant scope) still held by that tenant. No row back: it moved, or another tenant holds it.
    const held = "tenant" in scope ? sql` AND resources.tenant = ${scope.tenant}` : raw("");
    const row = await this.#upsertResource(resource, sql`WHERE resources.revision = ${expected}${held}`);
    if (row !== undefined) return { ok: true, resource: resourceOf(row), previous };
    const now = await this.getResource(resource.type, resource.id);
    if (now !== undefined && !inScope(scope, now.tenant))
      return { ok: false, reason: "held_by_another_tenant" };
    // A concurrent write moved the revision: try again against what is there now.
    return this.putResourceIn(scope, resource);
  }

  async updateResourceAttributes(
    type: string,
    id: string,
    expectedRevision: number,
    attributes: Record<string, unknown>,
  ): Promise<StoredResource | undefined> {
    checkExpectedRevision(expectedRevision);
    const text = jsonText(attributes, "/attributes");
    const [row] = await this.rows(
      "update a resource",
      sql`UPDATE resources SET attributes = ${text}, updated_at = ${this.clock().toISOString()}, revision = revision + 1
       WHERE type = ${type} AND id = ${id} AND revision = ${expectedRevision}
       RETURNING ${RESOURCE_COLUMNS}`,
    );
    return row === undefined ? undefined : resourceOf(row);
  }

  // ------------------------------------------------------------------------------ grants

  /** Deletes the use records of grants that expired at or before `now`; returns how many. */
  async pruneExpiredGrants(now: Date = this.clock()): Promise<number> {
    return this.execute(
      "prune expired grant uses",
      sql`DELETE FROM grant_uses WHERE expires_at <= ${now.getTime()}`,
    );
  }

  // ------------------------------------------------------------------------------ console sessions

  async createConsoleSession(session: NewConsoleSession): Promise<void> {
    await this.pruneConsoleSessions();
    await this.execute("store a console session", insertSessionQuery(session));
  }

  async useConsoleSession(
    idHash: string,
    idleTimeoutMs: number | null,
    now: Date = this.clock(),
  ): Promise<ConsoleSessionUse> {
    const t = now.getTime();
    const [row] = await this.rows("read a console session", useSessionQuery(idHash, idleTimeoutMs, t));
    if (row !== undefined) return { state: "active", session: sessionOf(row) };
    const [stored] = await this.rows("read a console session", sessionStateQuery(idHash));
    return inactiveSession(stored, t);
  }

  async revokeConsoleSession(idHash: string, now: Date = this.clock()): Promise<ConsoleSession | undefined> {
    const [row] = await this.rows("revoke a console session", revokeSessionQuery(idHash, now.getTime()));
    return row === undefined ? undefined : sessionOf(row);
  }

  async pruneConsoleSessions(now: Date = this.clock()): Promise<number> {
    return this.execute("prune expired console sessions", pruneSessionsQuery(now.getTime()));
  }

  // ------------------------------------------------------------------------------ call cancellations

  /** Asks whichever instance runs the call named `key` to cancel it (kept until `expiresAt`). */
  async requestCancellation(key: string, reason: string | undefined, expiresAt: Date): Promise<void> {
    const now = this.clock().getTime();
    await this.execute(
      "record a cancellation",
      sql`DELETE FROM call_cancellations WHERE expires_at <= ${now}`,
    );
    await this.execute(
      "record a cancellation",
      sql`INSERT INTO call_cancellations (key, reason, expires_at) VALUES (${key}, ${reason ?? null}, ${expiresAt.getTime()})
       ON CONFLICT (key) DO UPDATE SET reason = excluded.reason, expires_at = excluded.expires_at`,
    );
  }

  /** The cancellations asked for among `keys` (not expired), each with its reason. */
  async requestedCancellations(keys: readonly string[]): Promise<Map<string, string | undefined>> {
    const found = new Map<string, string | undefined>();
    if (keys.length === 0) return found;
    const rows = await this.rows(
      "read cancellations",
      sql`SELECT key, reason FROM call_cancellations
       WHERE key IN (${join(
         keys.map((key) => sql`${key}`),
         ", ",
       )}) AND expires_at > ${this.clock().getTime()}`,
    );
    for (const row of rows) {
      const parsed = cancellationRowSchema.safeParse(row);
      if (parsed.success) found.set(parsed.data.key, parsed.data.reason ?? undefined);
    }
    return found;
  }

  // ------------------------------------------------------------------------------ limits

  async limitUsage(buckets: readonly LimitBucket[], now: Date = this.clock()): Promise<number[]> {
    if (buckets.length === 0) return [];
    const rows = usageRows(await this.rows("read limit usage", usageQuery(buckets.map((b) => b.key))));
    return buckets.map((b) => usedNow(rows.get(b.key), b.drainPerSecond, now.getTime()));
  }

  // ------------------------------------------------------------------------------ decision log

  /** Appends may be answered out of call order when several are in flight (a pool of connections). */
  readonly ordersAppends: boolean = false;

  /** The batch in one transaction; when it fails, each entry again on its own. */
  async appendEachDecision(entries: readonly NewDecisionEntry[]): Promise<EntryAppend[]> {
    try {
      return (await this.appendDecisions(entries)).map((entry) => ({ ok: true, link: chainLinkOf(entry) }));
    } catch (error) {
      if (entries.length === 1) return [{ ok: false, error: WritError.from(error) }];
    }
    const each: EntryAppend[] = [];
    for (const entry of entries) each.push(...(await this.appendEachDecision([entry])));
    return each;
  }

  async appendDecision(entry: NewDecisionEntry): Promise<DecisionLogEntry> {
    const [stored] = await this.appendDecisions([entry]);
    if (stored === undefined) throw new Error("appendDecisions returned nothing for one entry");
    return stored;
  }

  async getDecision(decisionId: string): Promise<DecisionLogEntry | undefined> {
    const [row] = await this.rows(
      "read a decision",
      sql`SELECT ${DECISION_COLUMNS} FROM decisions WHERE decision_id = ${decisionId}`,
    );
    return row === undefined ? undefined : entryOf(row);
  }

  async queryDecisions(filter: DecisionFilter, limit: number, cursor?: string): Promise<DecisionPage> {
    const f = normalizeFilter(filter);
    const size = pageSize(limit);
    const before = cursor === undefined ? undefined : decodeCursor(cursor);
    const rows = await this.rows("query the decision log", decisionsQuery(this.dialect, f, size, before));
    const { items, next_cursor } = pageOf(rows, size, entryOf, (entry) => entry.seq);
    return next_cursor === undefined ? { entries: items } : { entries: items, next_cursor };
  }

  async getDecisionIn(scope: TenantScope, decisionId: string): Promise<DecisionLogEntry | undefined> {
    const entry = await this.getDecision(decisionId);
    return entry !== undefined && inScope(scope, entry.tenant) ? entry : undefined;
  }

  async queryDecisionsIn(
    scope: TenantScope,
    filter: DecisionFilter,
    limit: number,
    cursor?: string,
  ): Promise<DecisionPage> {
    const f = normalizeFilter(filter);
    const size = pageSize(limit);
    const before = cursor === undefined ? undefined : decodeScopedCursor(scope, cursor);
    if ("tenant" in scope) {
      if (f.tenant !== undefined && f.tenant !== scope.tenant) return { entries: [] };
      f.tenant = scope.tenant;
    }
    const rows = await this.rows("query the decision log", decisionsQuery(this.dialect, f, size, before));
    const { items, next_cursor } = pageOf(
      rows,
      size,
      (row) => entryInScope(scope, entryOf(row)),
      (entry) => entry.seq,
      (seq) => encodeScopedCursor(scope, seq),
    );
    return next_cursor === undefined ? { entries: items } : { entries: items, next_cursor };
  }

  async readDecisions(fromSeq: number, limit: number): Promise<DecisionLogEntry[]> {
    const size = readBatchSize(fromSeq, limit);
    const rows = await this.rows(
      "read the decision log",
      sql`SELECT ${DECISION_COLUMNS} FROM decisions WHERE seq >= ${fromSeq} ORDER BY seq LIMIT ${size}`,
    );
    return rows.map(entryOf);
  }

  async decisionHead(): Promise<{ seq: number; hash: string } | undefined> {
    const [row] = await this.rows("read the decision log's head", raw(HEAD_SQL));
    return row === undefined ? undefined : parseStored(lastRowSchema, row, "the last decision");
  }

  // ------------------------------------------------------------------------------ checkpoints

  async addCheckpoint(checkpoint: StoredCheckpoint): Promise<boolean> {
    const parsed = checkpointSchema.safeParse(checkpoint);
    if (!parsed.success) {
      throw new WritError("invalid_argument", "the checkpoint is invalid", {
        fieldErrors: fieldErrorsFromZod(parsed.error, "/checkpoint"),
        suggestedFix: "make checkpoints with the Checkpointer (src/decisionlog/checkpoint.ts)",
      });
    }
    const c = parsed.data;
    const changed = await this.execute(
      "store a checkpoint",
      sql`INSERT INTO checkpoints (${CHECKPOINT_COLUMNS}) VALUES (${c.seq}, ${c.hash}, ${c.time}, ${c.kid}, ${c.jws})
       ON CONFLICT (seq) DO NOTHING`,
    );
    return changed === 1;
  }

  async latestCheckpoint(): Promise<StoredCheckpoint | undefined> {
    const [row] = await this.rows(
      "read the latest checkpoint",
      sql`SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints ORDER BY seq DESC LIMIT 1`,
    );
    return row === undefined ? undefined : checkpointOf(row);
  }

  async readCheckpoints(fromSeq: number, limit: number): Promise<StoredCheckpoint[]> {
    const size = readBatchSize(fromSeq, limit);
    const rows = await this.rows(
      "read checkpoints",
      sql`SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE seq >= ${fromSeq} ORDER BY seq LIMIT ${size}`,
    );
    return rows.map(checkpointOf);
  }

  checkpointKeySet(): KeySetStorage {
    return new SqlKeySetStorage(
      { rows: (what, query) => this.rows(what, query), execute: (what, query) => this.execute(what, query) },
      this.location,
    );
  }

  // ------------------------------------------------------------------------------ log shipping

  async claimLogShipping(
    target: string,
    holder: string,
    leaseUntil: Date,
    now: Date = this.clock(),
  ): Promise<LogShippingClaim> {
    const what = "claim decision-log shipping";
    const [row] = await this.rows(what, claimShippingQuery(target, holder, leaseUntil, now));
    if (row !== undefined) return { held: true, shipped_seq: shippingStateOf(row).shipped_seq };
    const state = await this.logShipping(target);
    return { held: false, shipped_seq: state?.shipped_seq ?? 0 };
  }

  async advanceLogShipping(target: string, holder: string, seq: number, leaseUntil: Date): Promise<boolean> {
    const query = advanceShippingQuery(target, holder, seq, leaseUntil);
    return (await this.execute("record shipped decision-log entries", query)) === 1;
  }

  async releaseLogShipping(target: string, holder: string): Promise<void> {
    await this.execute("release decision-log shipping", releaseShippingQuery(target, holder));
  }

  async logShipping(target: string): Promise<LogShippingState | undefined> {
    const [row] = await this.rows("read decision-log shipping", shippingStateQuery(target));
    return row === undefined ? undefined : shippingStateOf(row);
  }

  // ------------------------------------------------------------------------------ policy revisions

  async archivePolicyRevision(revision: NewPolicyRevision, now: Date = this.clock()): Promise<boolean> {
    return (await this.execute("archive a policy revision", archiveRevisionQuery(revision, now))) === 1;
  }

  async listPolicyRevisions(limit: number, cursor?: string): Promise<PolicyRevisionPage> {
    const { query, size } = revisionsQuery(limit, cursor);
    return revisionsPageOf(await this.rows("list policy revisions", query), size);
  }

  async getPolicyRevision(id: string): Promise<PolicyRevisionRecord | undefined> {
    const [row] = await this.rows("read a policy revision", revisionQuery(id));
    return row === undefined ? undefined : revisionRecordOf(row);
  }

  // ------------------------------------------------------------------------------ group leases

  async claimGroupLease(
    group: string,
    holder: string,
    leaseUntil: Date,
    now: Date = this.clock(),
  ): Promise<boolean> {
    const rows = await this.rows(
      "claim a concurrency group's lease",
      claimGroupLeaseQuery(group, holder, leaseUntil, now),
    );
    return rows.length === 1;
  }

  async releaseGroupLease(group: string, holder: string): Promise<void> {
    await this.execute("release a concurrency group's lease", releaseGroupLeaseQuery(group, holder));
  }

  // ------------------------------------------------------------------------------ approvals

  async createApproval(request: NewApproval): Promise<ApprovalRecord> {
    const insert = insertApprovalQuery(this.dialect, request);
    try {
      const [row] = await this.rows("store an approval request", insert);
      return this.approvalOf(row);
    } catch (error) {
      const duplicate = this.dialect.uniqueViolation(error);
      if (duplicate !== undefined) throw duplicateApproval(request.id, duplicate);
      throw error;
    }
  }

  async openOrCreateApproval(request: NewApproval, now: Date = this.clock()): Promise<ApprovalOpening> {
    const insert = insertApprovalQuery(this.dialect, request);
    try {
      const { created, row } = await this.openOrInsertApproval(request, insert, now);
      return { created, record: this.approvalOf(row) };
    } catch (error) {
      const duplicate = this.dialect.uniqueViolation(error);
      if (duplicate !== undefined) throw duplicateApproval(request.id, duplicate);
      throw error;
    }
  }

  /**
   * The open request's row for `call` (`openApprovalQuery`), or `insert`'s row: the find and the
   * insert under a lock every instance takes for the same call (the dialect's own).
   */
  protected abstract openOrInsertApproval(
    call: ApprovalCall,
    insert: Sql,
    now: Date,
  ): Promise<{ created: boolean; row: unknown }>;

  async getApproval(id: string): Promise<ApprovalRecord | undefined> {
    const [row] = await this.rows(
      "read an approval",
      sql`SELECT seq, record FROM approvals WHERE id = ${id}`,
    );
    return row === undefined ? undefined : this.approvalOf(row);
  }

  async listApprovals(filter: ApprovalFilter, limit: number, cursor?: string): Promise<ApprovalPage> {
    const f = parseApprovalFilter(filter);
    const size = pageSize(limit);
    const before = cursor === undefined ? undefined : decodeCursor(cursor);
    const rows = await this.rows("list approvals", approvalsQuery(this.dialect, f, size, before));
    const page = pageOf(
      rows,
      size,
      (row) => this.#seqAndApproval(row),
      (item) => item.seq,
    );
    const approvals = page.items.map((item) => item.approval);
    return page.next_cursor === undefined ? { approvals } : { approvals, next_cursor: page.next_cursor };
  }

  async findOpenApproval(call: ApprovalCall, now: Date = this.clock()): Promise<ApprovalRecord | undefined> {
    const [row] = await this.rows("find an open approval", openApprovalQuery(call, now.getTime()));
    return row === undefined ? undefined : this.approvalOf(row);
  }

  async collectApprovalGrant(
    id: string,
    grant: ApprovalGrant,
    now: Date = this.clock(),
  ): Promise<ApprovalRecord | undefined> {
    const change = { grant, grant_jti: grant.jti };
    return this.#uncollected(id, "collect an approval's grant", change, sql`expires_at > ${now.getTime()}`);
  }

  async closeUncollectedApproval(
    id: string,
    update: ApprovalUpdate,
    now: Date = this.clock(),
  ): Promise<ApprovalRecord | undefined> {
    const change = decidedFields(update);
    switch (update.status) {
      case "expired":
        return this.#uncollected(
          id,
          "expire an approved request",
          change,
          sql`expires_at <= ${now.getTime()}`,
        );
      case "rejected":
        return this.#uncollected(id, "close an approved request", change, sql`1 = 1`);
      default:
        return undefined;
    }
  }

  /**
   * Changes an approved request whose grant was not collected, while it still is (status and
   * grant_jti are the compare-and-swap: nothing else changes an approved record, so the record
   * read first is the one replaced).
   */
  async #uncollected(
    id: string,
    what: string,
    change: Partial<ApprovalRecord>,
    due: Sql,
  ): Promise<ApprovalRecord | undefined> {
    const current = await this.getApproval(id);
    if (current?.status !== "approved" || current.grant_jti !== null) return undefined;
    const record = jsonText({ ...current, ...change }, "/approval");
    const status = change.status ?? "approved";
    const [row] = await this.rows(
      what,
      sql`UPDATE approvals SET status = ${status}, grant_jti = ${change.grant_jti ?? null}, record = ${record}
       WHERE id = ${id} AND status = 'approved' AND grant_jti IS NULL AND ${due}
       RETURNING seq, record`,
    );
    return row === undefined ? undefined : this.approvalOf(row);
  }

  /** An approval row (`seq, record`) as the record it holds. */
  protected approvalOf(row: unknown): ApprovalRecord {
    return this.#seqAndApproval(row).approval;
  }

  #seqAndApproval(row: unknown): { seq: number; approval: ApprovalRecord } {
    const r = parseStored(approvalRowSchema, row, "an approval row");
    return { seq: r.seq, approval: approvalOfJson(this.dialect.recordJson(r.record), r.seq) };
  }

  // ------------------------------------------------------------------------------ idempotency

  async completeIdempotency(subject: string, key: string, outcome: unknown): Promise<void> {
    const text = jsonText(outcome, "/outcome");
    await this.execute(
      "store an idempotent outcome",
      sql`UPDATE idempotency SET state = 'done', outcome = ${text} WHERE subject = ${subject} AND key = ${key}`,
    );
  }

  async releaseIdempotency(subject: string, key: string): Promise<void> {
    await this.execute(
      "release an idempotency key",
      sql`DELETE FROM idempotency WHERE subject = ${subject} AND key = ${key} AND state = 'pending'`,
    );
  }
}

/** A checkpoints row as stored: its columns are checked loosely (the JWS is what verifiers trust). */
function checkpointOf(row: unknown): StoredCheckpoint {
  return parseStored(
    z.object({ seq: z.number().int(), hash: z.string(), time: z.string(), kid: z.string(), jws: z.string() }),
    row,
    "a checkpoint",
  );
}
