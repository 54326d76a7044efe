/**
 * One SQLite connection and the writes the SQLite store makes, written once for the two places
 * they run: the store's own thread (an in-memory database, or `writer: "inline"`) and the
 * writer thread (sqlite-writer-worker.ts), which holds the connection that writes a database
 * file so that commits, and the sync to disk inside them, never block the event loop.
 *
 * A write procedure runs inside a transaction its caller opened (`BEGIN IMMEDIATE`); its
 * arguments and result cross a thread boundary, so they are plain data (structured-cloneable).
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { WritError } from "../core/errors.ts";
import {
  type ApprovalCall,
  type ApprovalUpdate,
  approvalOfJson,
  approvalRowSchema,
  decidedFields,
} from "./approval-records.ts";
import { openApprovalQuery } from "./approvals.ts";
import { chainAfter, chainEntry, HEAD_SQL, type PreparedEntry, prepareEntryText } from "./chain.ts";
import type { ChainLink, DecisionLogEntry } from "./decision-entry.ts";
import { duplicateDecision } from "./decisions.ts";
import type { Dialect } from "./dialect.ts";
import { consumeGrantSteps, type GrantConsumption, type GrantUse } from "./grant-uses.ts";
import { checkCounts, type HistoryCount, type HistoryWrite, writeHistory } from "./history.ts";
import { claimIdempotencySteps, type IdempotencyClaim, type IdempotencyRequest } from "./idempotency.ts";
import {
  checkCharges,
  type LimitCharge,
  type LimitConsumption,
  settleCharges,
  usageQuery,
  usageRows,
  writeUsageQuery,
} from "./limit-usage.ts";
import { jsonText, lastRowSchema, parseStored } from "./rows.ts";
import { GENESIS_HASH } from "./schema.ts";
import { raw, type Sql, sql } from "./sql.ts";
import { runStepsNow } from "./sql-access.ts";
import { sqliteStoreError } from "./sqlite-errors.ts";
import { type PlainError, plainError } from "./sqlite-plain-error.ts";

export const MEMORY = ":memory:";

export function sqliteUnique(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code === "SQLITE_CONSTRAINT_UNIQUE";
}

export const sqliteDialect: Dialect = {
  placeholder: () => "?",
  bareColumnsOfMax: true,
  timestampColumn: "timestamp",
  entryPath: raw("json_extract(entry, '$.path')"),
  entryHasReason: (code) =>
    sql`EXISTS (SELECT 1 FROM json_each(decisions.entry, '$.reasons') AS r WHERE json_extract(r.value, '$.code') = ${code})`,
  entryInRun: (runId) =>
    sql`(json_extract(decisions.entry, '$.input.context.run.id') = ${runId} OR json_extract(decisions.entry, '$.input.run.id') = ${runId})`,
  approverRolesOverlap: (roles) =>
    sql`EXISTS (SELECT 1 FROM json_each(approvals.approver_roles) AS r WHERE r.value IN (SELECT value FROM json_each(${JSON.stringify(roles)})))`,
  textArray: (values) => JSON.stringify(values),
  recordJson(column) {
    try {
      return typeof column === "string" ? JSON.parse(column) : undefined;
    } catch {
      return undefined;
    }
  },
  uniqueViolation: (error) =>
    error instanceof WritError && sqliteUnique(error.cause) ? error.cause : undefined,
};

export interface ConnectionOptions {
  synchronous: "full" | "normal";
  busyTimeoutMs: number;
}

type Statement = Database.Statement<unknown[], unknown>;

/** A better-sqlite3 connection with its prepared statements cached by their text. */
export class SqliteConnection {
  readonly db: Database.Database;
  readonly #statements = new Map<string, Statement>();

  /** Opens (or creates) the file in WAL mode with the store's pragmas. */
  constructor(location: string, options: ConnectionOptions) {
    let db: Database.Database | undefined;
    try {
      if (location !== MEMORY && location !== "")
        mkdirSync(path.dirname(path.resolve(location)), { recursive: true });
      db = new Database(location);
      db.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
      switchToWal(db, options.busyTimeoutMs);
      db.pragma(`synchronous = ${options.synchronous === "normal" ? "NORMAL" : "FULL"}`);
      db.pragma("foreign_keys = ON");
    } catch (error) {
      db?.close();
      throw sqliteStoreError(error, `open the SQLite database at ${location}`, options.busyTimeoutMs);
    }
    this.db = db;
  }

  statement(text: string): Statement {
    let statement = this.#statements.get(text);
    if (statement === undefined) {
      statement = this.db.prepare(text);
      this.#statements.set(text, statement);
    }
    return statement;
  }

  /** Forgets the prepared statements (after migrations, which change the tables). */
  forgetStatements(): void {
    this.#statements.clear();
  }

  all(query: Sql): unknown[] {
    const { text, values } = query.render(sqliteDialect.placeholder);
    return this.statement(text).all(...values);
  }

  run(query: Sql): void {
    const { text, values } = query.render(sqliteDialect.placeholder);
    this.statement(text).run(...values);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * Stored entries as one JSON text: parsing it costs the event loop a third of what taking a
 * structured clone of the same entries back from the writer thread does.
 */
export interface StoredEntriesText {
  json: string;
  /** What the entries counted in (none when they count in no history fact). */
  history?: HistoryWrite;
}

/** The entries of a `StoredEntriesText`, which the writer made from entries it had just stored. */
export function storedEntries(text: StoredEntriesText): DecisionLogEntry[] {
  return JSON.parse(text.json);
}

/** Each entry's history counts (store/history.ts), by its index in the append; absent: none. */
type EntriesHistory = readonly (readonly HistoryCount[] | undefined)[];

/** The head row of the log, or none for an empty log. */
const headRowSchema = lastRowSchema.optional();

/** `EntryAppend` with its error as plain data, as it crosses from the writer thread. */
export type PlainEntryAppend = { ok: true; link: ChainLink } | { ok: false; error: PlainError };

/** What a statement run by the writer gives back: its rows when it returns any, else its changes. */
export type StatementResult = { rows: unknown[] } | { changes: number };

/** The store's writes, each run inside a transaction its caller opened (BEGIN IMMEDIATE). */
export const sqliteWrites = {
  /**
   * Links entries (as `entryText` made them) after the head, hashes and inserts them, their
   * reason codes indexed, and writes what they count in (store/history.ts `writeHistory`).
   */
  appendDecisions(
    conn: SqliteConnection,
    texts: readonly string[],
    history: EntriesHistory,
    writer: string,
  ): StoredEntriesText {
    const prepared = texts.map(prepareEntryText);
    const stored = chainAfter(conn.statement(HEAD_SQL).get(), prepared);
    stored.forEach((entry, i) => {
      const body = prepared[i];
      if (body !== undefined) insertEntry(conn, body, entry);
    });
    const written = writeHistory(conn, writer, history, stored);
    return { json: JSON.stringify(stored), ...(written === undefined ? {} : { history: written }) };
  },

  /**
   * Entries (as `entryText` made them) appended in order, each in a savepoint of its own: one
   * that is refused fails alone and takes no seq. Where each went, or why it was refused.
   */
  appendEachDecision(
    conn: SqliteConnection,
    texts: readonly string[],
    history: EntriesHistory,
    writer: string,
  ): { appends: PlainEntryAppend[]; history?: HistoryWrite } {
    const head = parseStored(headRowSchema, conn.statement(HEAD_SQL).get(), "the last decision");
    let seq = head?.seq ?? 0;
    let prevHash = head?.hash ?? GENESIS_HASH;
    const counted: (readonly HistoryCount[] | undefined)[] = [];
    const appended: PreparedEntry["body"][] = [];
    const appends = texts.map((text, i): PlainEntryAppend => {
      try {
        const prepared = prepareEntryText(text);
        const counts = history[i];
        const link = conn.db.transaction(() => {
          if (counts !== undefined) checkCounts(counts);
          return insertChained(conn, prepared, seq + 1, prevHash);
        })();
        seq = link.seq;
        prevHash = link.hash;
        counted.push(counts);
        appended.push(prepared.body);
        return { ok: true, link };
      } catch (error) {
        // SQLite ends the whole transaction on some errors (disk full, I/O): then all fail.
        if (!conn.db.inTransaction) throw error;
        return { ok: false, error: plainError(error) };
      }
    });
    // What the appended entries count in, once per bucket, in their transaction: when this
    // fails, the whole call fails (no entry of it is committed).
    const written = writeHistory(conn, writer, counted, appended);
    return { appends, ...(written === undefined ? {} : { history: written }) };
  },

  consumeGrant(conn: SqliteConnection, use: GrantUse, now: Date): GrantConsumption {
    return runStepsNow(consumeGrantSteps(use, now), (query) => conn.all(query));
  },

  /** The approval row (`seq, record`) after the update, or undefined when it was not `expectedStatus`. */
  decideApproval(
    conn: SqliteConnection,
    id: string,
    expectedStatus: "pending",
    update: ApprovalUpdate,
    now: Date,
  ): unknown {
    const [row] = conn.all(sql`SELECT seq, record FROM approvals WHERE id = ${id}`);
    if (row === undefined) return undefined;
    const stored = parseStored(approvalRowSchema, row, "an approval row");
    const record = approvalOfJson(sqliteDialect.recordJson(stored.record), stored.seq);
    if (record.status !== expectedStatus) return undefined;
    const text = jsonText({ ...record, ...decidedFields(update) }, "/approval");
    const [updated] = conn.all(
      sql`UPDATE approvals SET status = ${update.status}, grant_jti = ${update.grant?.jti ?? null}, record = ${text}
       WHERE id = ${id} AND status = ${expectedStatus} AND (${update.status} = 'expired' OR expires_at > ${now.getTime()})
       RETURNING seq, record`,
    );
    return updated;
  },

  /**
   * The open request's row for `call`, or the row `insert` (a rendered INSERT … RETURNING)
   * stores: found and stored under the write lock the caller holds, which every connection to
   * the file (every instance) takes in turn.
   */
  openOrInsertApproval(
    conn: SqliteConnection,
    call: ApprovalCall,
    nowMs: number,
    insertText: string,
    insertValues: readonly unknown[],
  ): { created: boolean; row: unknown } {
    const [open] = conn.all(openApprovalQuery(call, nowMs));
    if (open !== undefined) return { created: false, row: open };
    return { created: true, row: conn.statement(insertText).get(...insertValues) };
  },

  claimIdempotency(conn: SqliteConnection, request: IdempotencyRequest): IdempotencyClaim {
    return runStepsNow(claimIdempotencySteps(request), (query) => conn.all(query));
  },

  /** Every bucket charged, or none: read and written under the write lock the caller holds. */
  consumeLimits(conn: SqliteConnection, charges: readonly LimitCharge[], now: Date): LimitConsumption {
    checkCharges(charges);
    if (charges.length === 0) return { ok: true, used: [] };
    const rows = usageRows(conn.all(usageQuery(charges.map((c) => c.key))));
    const { consumption, writes } = settleCharges(charges, rows, now.getTime());
    for (const row of writes) conn.run(writeUsageQuery(row));
    return consumption;
  },

  /** One rendered statement that writes: its rows when it returns any (RETURNING), else its changes. */
  statement(conn: SqliteConnection, text: string, values: readonly unknown[]): StatementResult {
    const statement = conn.statement(text);
    return statement.reader
      ? { rows: statement.all(...values) }
      : { changes: statement.run(...values).changes };
  },
};

/** Links one prepared entry at `seq` after `prevHash`, hashes and inserts it. */
function insertChained(
  conn: SqliteConnection,
  prepared: PreparedEntry,
  seq: number,
  prevHash: string,
): ChainLink {
  const entry = chainEntry(prepared, seq, prevHash);
  insertEntry(conn, prepared, entry);
  return { seq: entry.seq, prev_hash: entry.prev_hash, hash: entry.hash };
}

/** Inserts a chained entry and its reason codes; a decision id already in the log is a conflict. */
function insertEntry(conn: SqliteConnection, prepared: PreparedEntry, entry: DecisionLogEntry): void {
  try {
    conn
      .statement("INSERT INTO decisions (seq, entry, prev_hash, hash) VALUES (?, ?, ?, ?)")
      .run(entry.seq, prepared.text, entry.prev_hash, entry.hash);
  } catch (error) {
    if (sqliteUnique(error)) throw duplicateDecision(prepared.body.decision_id, error);
    throw error;
  }
  const reason = conn.statement("INSERT OR IGNORE INTO decision_reasons (code, seq) VALUES (?, ?)");
  for (const code of prepared.codes) reason.run(code, entry.seq);
}

type Procedures = typeof sqliteWrites;
export type ProcedureName = keyof Procedures;
/** A procedure's arguments without the connection. */
export type ProcedureArgs<P extends ProcedureName> =
  Parameters<Procedures[P]> extends [unknown, ...infer Rest] ? Rest : never;
export type ProcedureResult<P extends ProcedureName> = ReturnType<Procedures[P]>;

/** The procedures seen as one mapped type, so that a generic call correlates name, arguments and result. */
const procedures: {
  [P in ProcedureName]: (conn: SqliteConnection, ...args: ProcedureArgs<P>) => ProcedureResult<P>;
} = sqliteWrites;

/** Runs the write procedure named `procedure` on `conn` (its caller holds the transaction). */
export function runWrite<P extends ProcedureName>(
  conn: SqliteConnection,
  procedure: P,
  args: ProcedureArgs<P>,
): ProcedureResult<P> {
  return procedures[procedure](conn, ...args);
}

/**
 * Runs a procedure with arguments that crossed the thread boundary (the writer thread): they
 * were typed where the call was made (`ThreadWriter.call`), and are passed on as they are.
 */
export function runClonedWrite(
  conn: SqliteConnection,
  procedure: ProcedureName,
  args: readonly unknown[],
): unknown {
  return Reflect.apply(procedures[procedure], undefined, [conn, ...args]);
}

/**
 * `PRAGMA journal_mode = WAL` on a file another process is creating at the same moment can fail
 * with SQLITE_BUSY without consulting the busy handler; retry it until the busy timeout.
 */
function switchToWal(db: Database.Database, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 0; ; attempt++) {
    try {
      db.pragma("journal_mode = WAL");
      return;
    } catch (error) {
      const busy = error instanceof Database.SqliteError && error.code.startsWith("SQLITE_BUSY");
      if (!busy || Date.now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, Math.min(50, 5 * (attempt + 1)));
    }
  }
}
