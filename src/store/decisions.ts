/**
 * The decision log (`decisions`, with `decision_reasons` indexing reason codes): a hash chain of
 * entries (chain.ts links and hashes them). `DecisionStore` is what appends, reads and queries
 * it; `SqlDecisions` the SQL both dialects share. Each dialect appends under its own lock.
 */
import { z } from "zod";
import { canonicalJson } from "../core/digest.ts";
import { WritError } from "../core/errors.ts";
import { HEAD_SQL } from "./chain.ts";
import type {
  ChainLink,
  DecisionFilter,
  DecisionLogEntry,
  DecisionPage,
  EntryAppend,
  NewDecisionEntry,
} from "./decision-entry.ts";
import type { Dialect } from "./dialect.ts";
import { UnreadableEntryError } from "./errors.ts";
import {
  decodeCursor,
  decodeScopedCursor,
  encodeScopedCursor,
  normalizeFilter,
  pageOf,
  pageSize,
  seqRangeQuery,
} from "./paging.ts";
import { lastRowSchema, parseStored } from "./rows.ts";
import { decisionBodySchema, decisionRowSchema, entryFromBody } from "./schema.ts";
import { raw, type Sql, sql, where } from "./sql.ts";
import type { SqlAccess } from "./sql-access.ts";
import { inScope, type TenantScope } from "./tenancy.ts";

export interface DecisionStore {
  /**
   * Appends a decision-log entry: assigns the next `seq`, links it to the previous entry's
   * hash, and stores it with its hash (`entryHash` of chain.ts), in one transaction. Durable
   * when it resolves.
   */
  appendDecision(entry: NewDecisionEntry): Promise<DecisionLogEntry>;
  /** Like appendDecision for several entries, in order, in one transaction: all or none. */
  appendDecisions(entries: readonly NewDecisionEntry[]): Promise<DecisionLogEntry[]>;
  /**
   * Appends entries in order, each on its own: one that is refused (invalid, or a decision id
   * already in the log) fails alone and takes no seq. Answers where each entry went in the
   * chain, or why it was refused: what the decision log answers an append with, without carrying
   * the stored entries back. Durable when it resolves.
   */
  appendEachDecision(entries: readonly NewDecisionEntry[]): Promise<EntryAppend[]>;
  /**
   * Whether appends are applied in the order they were called even while several are in flight
   * (the decision log then sends the next batch before the last one is answered).
   */
  readonly ordersAppends: boolean;
  /** Any entry, whatever its tenant (the operator's CLI, the pipeline); reviewers use getDecisionIn. */
  getDecision(decisionId: string): Promise<DecisionLogEntry | undefined>;
  /** The entry when its tenant is `scope`'s; undefined (as if absent) otherwise. */
  getDecisionIn(scope: TenantScope, decisionId: string): Promise<DecisionLogEntry | undefined>;
  /** Newest first, whatever the tenant (the operator's CLI); reviewers use queryDecisionsIn. */
  queryDecisions(filter: DecisionFilter, limit: number, cursor?: string): Promise<DecisionPage>;
  /**
   * Newest first, only entries of `scope`'s tenant (a `filter.tenant` naming another tenant
   * matches nothing). Cursors are bound to the scope: one handed out in another scope is refused.
   */
  queryDecisionsIn(
    scope: TenantScope,
    filter: DecisionFilter,
    limit: number,
    cursor?: string,
  ): Promise<DecisionPage>;
  /** Entries in `seq` order from `fromSeq` (inclusive), at most `limit`. */
  readDecisions(fromSeq: number, limit: number): Promise<DecisionLogEntry[]>;

  /** The log's last entry (seq and hash), or undefined while it is empty. */
  decisionHead(): Promise<{ seq: number; hash: string } | undefined>;
}

export const DECISION_COLUMNS = raw("seq, entry, prev_hash, hash");

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

/**
 * An entry a scoped query found, confirmed against the entry itself: the query filtered on the
 * generated `tenant` column, which must agree with the entry it was read from (entryOf refuses
 * text on which they could differ); one that does not is refused, never shown to another tenant.
 */
function entryInScope(scope: TenantScope, entry: DecisionLogEntry): DecisionLogEntry {
  if (inScope(scope, entry.tenant)) return entry;
  throw new UnreadableEntryError(entry.seq, entry.decision_id, "its tenant column disagrees with the entry");
}

function chainLinkOf({ seq, prev_hash, hash }: DecisionLogEntry): ChainLink {
  return { seq, prev_hash, hash };
}

/** A dialect's append of entries in one transaction, under its own lock: all or none. */
export type AppendDecisions = (entries: readonly NewDecisionEntry[]) => Promise<DecisionLogEntry[]>;

/** What both dialects share of the decision log: everything but the locked append and its order. */
export class SqlDecisions implements Omit<DecisionStore, "appendDecisions" | "ordersAppends"> {
  constructor(
    private readonly db: SqlAccess,
    private readonly append: AppendDecisions,
  ) {}

  /** The batch in one transaction; when it fails, each entry again on its own. */
  async appendEachDecision(entries: readonly NewDecisionEntry[]): Promise<EntryAppend[]> {
    try {
      return (await this.append(entries)).map((entry) => ({ ok: true, link: chainLinkOf(entry) }));
    } catch (error) {
      if (entries.length === 1) return [{ ok: false, error: WritError.from(error) }];
    }
    const each: EntryAppend[] = [];
    for (const entry of entries) each.push(...(await this.appendEachDecision([entry])));
    return each;
  }

  async appendDecision(entry: NewDecisionEntry): Promise<DecisionLogEntry> {
    const [stored] = await this.append([entry]);
    if (stored === undefined) throw new Error("appendDecisions returned nothing for one entry");
    return stored;
  }

  async getDecision(decisionId: string): Promise<DecisionLogEntry | undefined> {
    const [row] = await this.db.rows(
      "read a decision",
      sql`SELECT ${DECISION_COLUMNS} FROM decisions WHERE decision_id = ${decisionId}`,
    );
    return row === undefined ? undefined : entryOf(row);
  }

  async queryDecisions(filter: DecisionFilter, limit: number, cursor?: string): Promise<DecisionPage> {
    const f = normalizeFilter(filter);
    const size = pageSize(limit);
    const before = cursor === undefined ? undefined : decodeCursor(cursor);
    const rows = await this.db.rows(
      "query the decision log",
      decisionsQuery(this.db.dialect, f, size, before),
    );
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
    const rows = await this.db.rows(
      "query the decision log",
      decisionsQuery(this.db.dialect, f, size, before),
    );
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
    const query = seqRangeQuery("decisions", DECISION_COLUMNS, fromSeq, limit);
    return (await this.db.rows("read the decision log", query)).map(entryOf);
  }

  async decisionHead(): Promise<{ seq: number; hash: string } | undefined> {
    const [row] = await this.db.rows("read the decision log's head", raw(HEAD_SQL));
    return row === undefined ? undefined : parseStored(lastRowSchema, row, "the last decision");
  }
}
