/**
 * Approval requests (`approvals`; approval-records.ts says what a record holds). `ApprovalStore`
 * is what opens, lists and decides them; `SqlApprovals` the SQL both dialects share. Each
 * dialect decides a request and opens one for a call under its own locking.
 */
import {
  type ApprovalCall,
  type ApprovalFilter,
  type ApprovalGrant,
  type ApprovalOpening,
  type ApprovalPage,
  type ApprovalRecord,
  type ApprovalUpdate,
  approvalCallKey,
  approvalOfJson,
  approvalRowSchema,
  decidedFields,
  duplicateApproval,
  type NewApproval,
  parseApprovalFilter,
  pendingApproval,
} from "./approval-records.ts";
import type { Dialect } from "./dialect.ts";
import { decodeCursor, pageOf, pageSize } from "./paging.ts";
import { jsonText, parseStored } from "./rows.ts";
import { type Sql, sql, where } from "./sql.ts";
import type { SqlAccess } from "./sql-access.ts";

export interface ApprovalStore {
  /** Stores a new approval request, status `pending`. */
  createApproval(request: NewApproval): Promise<ApprovalRecord>;
  /**
   * The open request for the same call as `request` (as `findOpenApproval` finds it), or else
   * `request` stored as a new pending one, in one atomic step across instances: of any number of
   * proposals of one call racing on any number of instances, exactly one opens a request and the
   * others get it back (`created: false`).
   */
  openOrCreateApproval(request: NewApproval, now?: Date): Promise<ApprovalOpening>;
  getApproval(id: string): Promise<ApprovalRecord | undefined>;
  /** Newest first. */
  listApprovals(filter: ApprovalFilter, limit: number, cursor?: string): Promise<ApprovalPage>;
  /**
   * Compare-and-swap: applies `update` only while the status is still `expectedStatus` (and, for
   * any outcome but `expired`, only before `expires_at`). Undefined when it was already decided,
   * expired, or does not exist: an approval is decided exactly once.
   */
  decideApproval(
    id: string,
    expectedStatus: "pending",
    update: ApprovalUpdate,
    now?: Date,
  ): Promise<ApprovalRecord | undefined>;
  /**
   * Compare-and-swap on an approved request whose grant was not collected yet: records the grant
   * released to its requester, only before `expires_at`. Undefined when it was already collected,
   * is not approved, expired, or does not exist: a request releases at most one grant.
   */
  collectApprovalGrant(id: string, grant: ApprovalGrant, now?: Date): Promise<ApprovalRecord | undefined>;
  /**
   * Ends an approved request whose grant was never collected: `expired` once `expires_at`
   * passed, or `rejected` (its resource moved since the approval: `stale_revision`) at any time.
   * Undefined when it was collected, is not approved, is not due, or does not exist.
   */
  closeUncollectedApproval(
    id: string,
    update: ApprovalUpdate,
    now?: Date,
  ): Promise<ApprovalRecord | undefined>;
  /**
   * The newest request for this exact call (requester, contract, action and argument digest,
   * resource and its revision) that is still open: pending, or approved with its grant not yet
   * collected, and not past `expires_at`.
   */
  findOpenApproval(call: ApprovalCall, now?: Date): Promise<ApprovalRecord | undefined>;
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
function insertApprovalQuery(dialect: Dialect, request: NewApproval): Sql {
  const { record, expiresAtMs } = pendingApproval(request);
  const text = jsonText(record, "/approval");
  const roles = dialect.textArray(request.approver_roles);
  return sql`INSERT INTO approvals (id, tenant, requester, status, approver_roles, expires_at, call_key, record)
         VALUES (${request.id}, ${request.requester.tenant}, ${request.requester.id}, 'pending', ${roles}, ${expiresAtMs}, ${approvalCallKey(request)}, ${text})
         RETURNING seq, record`;
}

/** An approval row (`seq, record`) with the record it holds. */
function seqAndApproval(dialect: Dialect, row: unknown): { seq: number; approval: ApprovalRecord } {
  const r = parseStored(approvalRowSchema, row, "an approval row");
  return { seq: r.seq, approval: approvalOfJson(dialect.recordJson(r.record), r.seq) };
}

/** An approval row (`seq, record`) as the record it holds. */
export function approvalOfRow(dialect: Dialect, row: unknown): ApprovalRecord {
  return seqAndApproval(dialect, row).approval;
}

/** A request to open for `call` (stored by `insert`) unless one is open at `now`. */
export interface ApprovalOpeningRequest {
  call: ApprovalCall;
  insert: Sql;
  now: Date;
}

/** A decision of a pending request, as `decideApproval` takes it. */
export interface ApprovalDecision {
  id: string;
  expectedStatus: "pending";
  update: ApprovalUpdate;
  now: Date;
}

/** What each dialect does under its own locking. */
export interface ApprovalLocking {
  /**
   * The open request's row for the call (`openApprovalQuery`), or the insert's row: the find and
   * the insert under a lock every instance takes for the same call.
   */
  openOrInsert(request: ApprovalOpeningRequest): Promise<{ created: boolean; row: unknown }>;
  /**
   * The row (`seq, record`) after the decision, compare-and-swapped on the status (and, for any
   * outcome but `expired`, on `expires_at`); undefined when it was not pending.
   */
  decide(decision: ApprovalDecision): Promise<unknown>;
}

/** Approvals in both dialects, over their locking. */
export class SqlApprovals implements ApprovalStore {
  constructor(
    private readonly db: SqlAccess,
    private readonly locking: ApprovalLocking,
  ) {}

  async decideApproval(
    id: string,
    expectedStatus: "pending",
    update: ApprovalUpdate,
    now: Date = this.db.clock(),
  ): Promise<ApprovalRecord | undefined> {
    const row = await this.locking.decide({ id, expectedStatus, update, now });
    return row === undefined ? undefined : this.#approvalOf(row);
  }

  async createApproval(request: NewApproval): Promise<ApprovalRecord> {
    return this.#inserting(request, async (insert) => {
      const [row] = await this.db.rows("store an approval request", insert);
      return this.#approvalOf(row);
    });
  }

  async openOrCreateApproval(request: NewApproval, now: Date = this.db.clock()): Promise<ApprovalOpening> {
    return this.#inserting(request, async (insert) => {
      const { created, row } = await this.locking.openOrInsert({ call: request, insert, now });
      return { created, record: this.#approvalOf(row) };
    });
  }

  /** Runs `work` with the INSERT of `request`; a request id stored already is a conflict. */
  async #inserting<T>(request: NewApproval, work: (insert: Sql) => Promise<T>): Promise<T> {
    const insert = insertApprovalQuery(this.db.dialect, request);
    try {
      return await work(insert);
    } catch (error) {
      const duplicate = this.db.dialect.uniqueViolation(error);
      if (duplicate !== undefined) throw duplicateApproval(request.id, duplicate);
      throw error;
    }
  }

  async getApproval(id: string): Promise<ApprovalRecord | undefined> {
    const [row] = await this.db.rows(
      "read an approval",
      sql`SELECT seq, record FROM approvals WHERE id = ${id}`,
    );
    return row === undefined ? undefined : this.#approvalOf(row);
  }

  async listApprovals(filter: ApprovalFilter, limit: number, cursor?: string): Promise<ApprovalPage> {
    const f = parseApprovalFilter(filter);
    const size = pageSize(limit);
    const before = cursor === undefined ? undefined : decodeCursor(cursor);
    const rows = await this.db.rows("list approvals", approvalsQuery(this.db.dialect, f, size, before));
    const page = pageOf(
      rows,
      size,
      (row) => seqAndApproval(this.db.dialect, row),
      (item) => item.seq,
    );
    const approvals = page.items.map((item) => item.approval);
    return page.next_cursor === undefined ? { approvals } : { approvals, next_cursor: page.next_cursor };
  }

  async findOpenApproval(
    call: ApprovalCall,
    now: Date = this.db.clock(),
  ): Promise<ApprovalRecord | undefined> {
    const [row] = await this.db.rows("find an open approval", openApprovalQuery(call, now.getTime()));
    return row === undefined ? undefined : this.#approvalOf(row);
  }

  async collectApprovalGrant(
    id: string,
    grant: ApprovalGrant,
    now: Date = this.db.clock(),
  ): Promise<ApprovalRecord | undefined> {
    const change = { grant, grant_jti: grant.jti };
    return this.#uncollected(id, "collect an approval's grant", change, sql`expires_at > ${now.getTime()}`);
  }

  async closeUncollectedApproval(
    id: string,
    update: ApprovalUpdate,
    now: Date = this.db.clock(),
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
    const [row] = await this.db.rows(
      what,
      sql`UPDATE approvals SET status = ${status}, grant_jti = ${change.grant_jti ?? null}, record = ${record}
       WHERE id = ${id} AND status = 'approved' AND grant_jti IS NULL AND ${due}
       RETURNING seq, record`,
    );
    return row === undefined ? undefined : this.#approvalOf(row);
  }

  #approvalOf(row: unknown): ApprovalRecord {
    return approvalOfRow(this.db.dialect, row);
  }
}
