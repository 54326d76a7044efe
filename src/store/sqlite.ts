/**
 * The embedded `Store`: one SQLite file in WAL mode, through better-sqlite3 (synchronous calls
 * behind the async interface). Every change is one transaction; writes that read before they
 * write take the write lock up front (`BEGIN IMMEDIATE`), so two processes sharing a file
 * serialize instead of failing half-way. The SQL shared with PostgreSQL is in each capability's
 * module (assembled by sql-store.ts); this module keeps the connection, the migrations and the
 * locked read-then-writes.
 */
import { WritError } from "../core/errors.ts";
import type { ApprovalDecision, ApprovalOpeningRequest } from "./approvals.ts";
import { storeBackend } from "./backend.ts";
import { entryText } from "./chain.ts";
import type { DecisionLogEntry, EntryAppend, NewDecisionEntry } from "./decision-entry.ts";
import type { GrantConsumption, GrantUse } from "./grant-uses.ts";
import type { HistoryBucket, HistoryCount, HistoryQuery } from "./history.ts";
import type { IdempotencyClaim, IdempotencyRequest } from "./idempotency.ts";
import type { LimitCharge, LimitConsumption } from "./limit-usage.ts";
import { sqliteMigrations } from "./migrations.ts";
import { appliedVersions } from "./rows.ts";
import { type Sql, sql } from "./sql.ts";
import { SqlStore } from "./sql-store.ts";
import {
  MEMORY,
  type ProcedureArgs,
  type ProcedureName,
  type ProcedureResult,
  SqliteConnection,
  sqliteDialect,
  storedEntries,
} from "./sqlite-connection.ts";
import { sqliteStoreError } from "./sqlite-errors.ts";
import { SqliteHistory } from "./sqlite-history.ts";
import { revivedError } from "./sqlite-plain-error.ts";
import { InlineWriter, type SqliteWriter, ThreadWriter } from "./sqlite-writer.ts";
import type { Store } from "./types.ts";

export { sqliteDialect } from "./sqlite-connection.ts";

export interface SqliteStoreOptions {
  /**
   * When a commit reaches the disk. `"full"` (the default) syncs the WAL on every commit, so an
   * entry that was acknowledged survives a power cut; `"normal"` syncs only at checkpoints and
   * can lose the last commits on power loss (never on a process crash).
   */
  synchronous?: "full" | "normal";
  /** How long a write waits for another connection's lock before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  /** The clock for `updated_at` and grant expiry (default: the system clock). */
  now?: () => Date;
  /**
   * Where a database file is written: `"thread"` (the default) on the process's writer thread,
   * so that commits and their syncs never block the event loop; `"inline"` on this thread.
   * An in-memory database is always written inline.
   */
  writer?: "thread" | "inline";
}

export class SqliteStore extends SqlStore implements Store {
  /** The file path, or `:memory:`. */
  readonly location: string;
  /** The journal mode SQLite reports (`wal` for files, `memory` for `:memory:`). */
  readonly journalMode: string;
  /** The synchronous level SQLite reports: 2 = FULL, 1 = NORMAL. */
  readonly synchronous: number;
  /** Where writes run: `"thread"` (the process's writer thread) or `"inline"` (this thread). */
  readonly writer: "thread" | "inline";
  readonly #conn: SqliteConnection;
  readonly #writer: SqliteWriter;
  readonly #busyTimeoutMs: number;
  readonly #history: SqliteHistory;

  /** Opens (or creates) the database; call `migrate()` before use, or use `SqliteStore.open`. */
  constructor(location: string, options: SqliteStoreOptions = {}) {
    super(sqliteDialect, options.now);
    this.location = location;
    this.#busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    if (!Number.isSafeInteger(this.#busyTimeoutMs) || this.#busyTimeoutMs < 0) {
      throw new WritError("invalid_argument", `busyTimeoutMs must be a non-negative integer`, {
        suggestedFix: "pass a timeout in milliseconds, e.g. 5000",
      });
    }
    const connection = { synchronous: options.synchronous ?? "full", busyTimeoutMs: this.#busyTimeoutMs };
    this.#conn = new SqliteConnection(location, connection);
    this.journalMode = String(this.#conn.db.pragma("journal_mode", { simple: true }));
    this.synchronous = Number(this.#conn.db.pragma("synchronous", { simple: true }));
    const inMemory = location === MEMORY || location === "" || this.journalMode !== "wal";
    this.writer = inMemory || options.writer === "inline" ? "inline" : "thread";
    this.#writer =
      this.writer === "inline" ? new InlineWriter(this.#conn) : new ThreadWriter(location, connection);
    this.#history = new SqliteHistory(this.#conn, this.writer === "thread");
  }

  /** Opens the database and applies the migrations. */
  static open(location: string, options: SqliteStoreOptions = {}): Promise<SqliteStore> {
    return SqlStore.migrated(new SqliteStore(location, options));
  }

  async migrate(): Promise<void> {
    const db = this.#conn.db;
    this.#run("apply the schema migrations", () => {
      db.transaction(() => {
        db.exec(
          `CREATE TABLE IF NOT EXISTS schema_migrations (
             version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`,
        );
        const applied = appliedVersions(
          db.prepare("SELECT version FROM schema_migrations").all(),
          sqliteMigrations,
          this.location,
          "run a Writ release at least as new as the one that last wrote this file",
        );
        const record = db.prepare(
          "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
        );
        for (const migration of sqliteMigrations) {
          if (applied.has(migration.version)) continue;
          db.exec(migration.sql);
          record.run(migration.version, migration.name, this.clock().toISOString());
        }
      }).immediate();
    });
    this.#conn.forgetStatements();
  }

  async close(): Promise<void> {
    try {
      await this.#writer.close();
    } finally {
      this.#conn.close();
    }
  }

  async consumeGrant(use: GrantUse, now: Date = this.clock()): Promise<GrantConsumption> {
    return this.#write("record a grant use", "consumeGrant", [use, now]);
  }

  /**
   * Appends several entries in one transaction (one sync to disk for all of them): the decision
   * log batches the appends that queue up while a write is in flight.
   */
  async appendDecisions(entries: readonly NewDecisionEntry[]): Promise<DecisionLogEntry[]> {
    const texts = this.#run("append to the decision log", () => entries.map(entryText));
    const history = entries.map((entry) => entry.history);
    const stored = await this.#write("append to the decision log", "appendDecisions", [
      texts,
      history,
      this.#history.writer,
    ]);
    this.#history.written(stored.history);
    return storedEntries(stored);
  }

  /** One writer thread (or this thread) applies appends in the order they were sent. */
  override readonly ordersAppends = true;

  override async appendEachDecision(entries: readonly NewDecisionEntry[]): Promise<EntryAppend[]> {
    const what = "append to the decision log";
    const texts: string[] = [];
    const history: (readonly HistoryCount[] | undefined)[] = [];
    const refused = new Map<number, WritError>();
    for (const [i, entry] of entries.entries()) {
      try {
        texts.push(entryText(entry));
        history.push(entry.history);
      } catch (error) {
        refused.set(i, WritError.from(error));
      }
    }
    const { appends: appended, history: written } =
      texts.length === 0
        ? { appends: [] }
        : await this.#write(what, "appendEachDecision", [texts, history, this.#history.writer]);
    this.#history.written(written);
    let next = 0;
    return entries.map((_, i): EntryAppend => {
      const error = refused.get(i);
      if (error !== undefined) return { ok: false, error };
      const result = appended[next++];
      if (result === undefined) {
        return {
          ok: false,
          error: sqliteStoreError(new Error("the writer answered fewer entries"), what, 0),
        };
      }
      if (result.ok) return result;
      return {
        ok: false,
        error: sqliteStoreError(revivedError(result.error), what, this.#busyTimeoutMs, this.location),
      };
    });
  }

  /** From memory while no other writer wrote history buckets (store/sqlite-history.ts). */
  override async historyBuckets(queries: readonly HistoryQuery[]): Promise<HistoryBucket[]> {
    return this.#run("read history facts", () => this.#history.read(queries));
  }

  /** Expired buckets, and the rows of history writers idle for a day (never the highest version). */
  override async pruneHistory(now: Date = this.clock()): Promise<number> {
    const pruned = await super.pruneHistory(now);
    await this.execute(
      "prune history writers",
      sql`DELETE FROM history_writers WHERE updated_at < ${now.getTime() - 86_400_000}
        AND version < (SELECT MAX(version) FROM history_writers)`,
    );
    return pruned;
  }

  /** Reads the record, applies the update and writes it back, under the write lock. */
  protected decideApprovalRow(d: ApprovalDecision): Promise<unknown> {
    return this.#write("decide an approval", "decideApproval", [d.id, d.expectedStatus, d.update, d.now]);
  }

  /** Found and stored under the write lock, which every connection to the file takes in turn. */
  protected openOrInsertApproval(
    request: ApprovalOpeningRequest,
  ): Promise<{ created: boolean; row: unknown }> {
    const { text, values } = request.insert.render(sqliteDialect.placeholder);
    const { call, now } = request;
    return this.#write("open an approval request", "openOrInsertApproval", [
      call,
      now.getTime(),
      text,
      values,
    ]);
  }

  protected claimIdempotencyKey(request: IdempotencyRequest): Promise<IdempotencyClaim> {
    return this.#write("claim an idempotency key", "claimIdempotency", [request]);
  }

  /** Read and written on the writer, under its write lock: other processes on the file wait. */
  async consumeLimits(charges: readonly LimitCharge[], now: Date = this.clock()): Promise<LimitConsumption> {
    return this.#write("charge limits", "consumeLimits", [charges, now]);
  }

  // ------------------------------------------------------------------------------ helpers

  /** Reads run on this thread's connection; a statement that writes goes to the writer. */
  protected async rows(what: string, query: Sql): Promise<unknown[]> {
    const { text, values } = query.render(sqliteDialect.placeholder);
    const statement = this.#run(what, () => this.#conn.statement(text));
    if (statement.readonly) return this.#run(what, () => statement.all(...values));
    const result = await this.#write(what, "statement", [text, values]);
    return "rows" in result ? result.rows : [];
  }

  protected async execute(what: string, query: Sql): Promise<number> {
    const { text, values } = query.render(sqliteDialect.placeholder);
    const result = await this.#write(what, "statement", [text, values]);
    return "changes" in result ? result.changes : result.rows.length;
  }

  async #write<P extends ProcedureName>(
    what: string,
    procedure: P,
    args: ProcedureArgs<P>,
  ): Promise<ProcedureResult<P>> {
    this.#checkOpen(what);
    try {
      return await this.#writer.call(procedure, args);
    } catch (error) {
      throw sqliteStoreError(error, what, this.#busyTimeoutMs, this.location);
    }
  }

  #checkOpen(what: string): void {
    if (!this.#conn.db.open) {
      throw new WritError("internal", `cannot ${what}: the store at ${this.location} is closed`, {
        suggestedFix: "open a new store (SqliteStore.open) instead of reusing a closed one",
      });
    }
  }

  #run<T>(what: string, work: () => T): T {
    this.#checkOpen(what);
    try {
      return work();
    } catch (error) {
      throw sqliteStoreError(error, what, this.#busyTimeoutMs, this.location);
    }
  }
}

/** The `sqlite` store section's backend: a file, migrated when opened. */
export const sqliteBackend = storeBackend("sqlite", (file) => SqliteStore.open(file));
