/**
 * The embedded `Store`: one SQLite file in WAL mode, through better-sqlite3 (synchronous calls
 * behind the async interface). Every change is one transaction; writes that read before they
 * write take the write lock up front (`BEGIN IMMEDIATE`), so two processes sharing a file
 * serialize instead of failing half-way. The SQL shared with PostgreSQL is in sql-store.ts and
 * queries.ts; this module keeps the connection, the migrations and the locked read-then-writes.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { WritError } from "../core/errors.ts";
import { type ComputeHash, chainAfter, HEAD_SQL, prepareEntries } from "./chain.ts";
import type { Dialect } from "./dialect.ts";
import { sqliteMigrations } from "./migrations.ts";
import { claimQuery, claimRowQuery, grantRowQuery, grantUseQuery, heldClaim } from "./queries.ts";
import {
  appliedVersions,
  checkGrantUse,
  decidedFields,
  duplicateDecision,
  grantRowSchema,
  jsonText,
  parseStored,
  usesRowSchema,
} from "./rows.ts";
import { type Sql, sql } from "./sql.ts";
import { SqlStore } from "./sql-store.ts";
import { sqliteStoreError } from "./sqlite-errors.ts";
import type {
  ApprovalRecord,
  ApprovalUpdate,
  DecisionLogEntry,
  GrantConsumption,
  IdempotencyClaim,
  NewDecisionEntry,
  Store,
} from "./types.ts";

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
}

const MEMORY = ":memory:";

function sqliteUnique(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code === "SQLITE_CONSTRAINT_UNIQUE";
}

export const sqliteDialect: Dialect = {
  placeholder: () => "?",
  timestampColumn: "timestamp",
  entryHasReason: (code) =>
    sql`EXISTS (SELECT 1 FROM json_each(decisions.entry, '$.reasons') AS r WHERE json_extract(r.value, '$.code') = ${code})`,
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

type Statement = Database.Statement<unknown[], unknown>;

export class SqliteStore extends SqlStore implements Store {
  /** The file path, or `:memory:`. */
  readonly location: string;
  /** The journal mode SQLite reports (`wal` for files, `memory` for `:memory:`). */
  readonly journalMode: string;
  /** The synchronous level SQLite reports: 2 = FULL, 1 = NORMAL. */
  readonly synchronous: number;
  readonly #db: Database.Database;
  readonly #busyTimeoutMs: number;
  /** Prepared statements by their text (emptied by migrations, which change the tables). */
  readonly #statements = new Map<string, Statement>();

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
    let db: Database.Database | undefined;
    try {
      if (location !== MEMORY && location !== "")
        mkdirSync(path.dirname(path.resolve(location)), { recursive: true });
      db = new Database(location);
      db.pragma(`busy_timeout = ${this.#busyTimeoutMs}`);
      switchToWal(db, this.#busyTimeoutMs);
      db.pragma(`synchronous = ${options.synchronous === "normal" ? "NORMAL" : "FULL"}`);
      db.pragma("foreign_keys = ON");
      this.journalMode = String(db.pragma("journal_mode", { simple: true }));
      this.synchronous = Number(db.pragma("synchronous", { simple: true }));
    } catch (error) {
      db?.close();
      throw sqliteStoreError(error, `open the SQLite database at ${location}`, this.#busyTimeoutMs);
    }
    this.#db = db;
  }

  /** Opens the database and applies the migrations. */
  static async open(location: string, options: SqliteStoreOptions = {}): Promise<SqliteStore> {
    const store = new SqliteStore(location, options);
    try {
      await store.migrate();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  async migrate(): Promise<void> {
    this.#run("apply the schema migrations", () => {
      this.#db
        .transaction(() => {
          this.#db.exec(
            `CREATE TABLE IF NOT EXISTS schema_migrations (
               version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`,
          );
          const applied = appliedVersions(
            this.#db.prepare("SELECT version FROM schema_migrations").all(),
            sqliteMigrations,
            this.location,
            "run a Writ release at least as new as the one that last wrote this file",
          );
          const record = this.#db.prepare(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
          );
          for (const migration of sqliteMigrations) {
            if (applied.has(migration.version)) continue;
            this.#db.exec(migration.sql);
            record.run(migration.version, migration.name, this.clock().toISOString());
          }
        })
        .immediate();
    });
    this.#statements.clear();
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }

  async consumeGrant(
    jti: string,
    maxUses: number,
    expiresAt: Date,
    now: Date = this.clock(),
  ): Promise<GrantConsumption> {
    checkGrantUse(jti, maxUses, expiresAt, now);
    if (now.getTime() >= expiresAt.getTime()) return { ok: false, reason: "expired" };
    return this.#run("record a grant use", () =>
      this.#db
        .transaction((): GrantConsumption => {
          const [row] = this.#all(grantUseQuery(jti, maxUses, expiresAt, now));
          if (row !== undefined)
            return { ok: true, uses: parseStored(usesRowSchema, row, "a grant use").uses };
          const stored = parseStored(grantRowSchema, this.#all(grantRowQuery(jti))[0], "a grant use");
          return { ok: false, reason: stored.expires_at <= now.getTime() ? "expired" : "exhausted" };
        })
        .immediate(),
    );
  }

  /**
   * Appends several entries in one transaction (one sync to disk for all of them): the decision
   * log batches the appends that queue up while a write is in flight.
   */
  async appendDecisions(
    entries: readonly NewDecisionEntry[],
    computeHash: ComputeHash,
  ): Promise<DecisionLogEntry[]> {
    const prepared = prepareEntries(entries);
    return this.#run("append to the decision log", () =>
      this.#db
        .transaction((): DecisionLogEntry[] => {
          const stored = chainAfter(this.#statement(HEAD_SQL).get(), prepared, computeHash);
          const insert = this.#statement(
            "INSERT INTO decisions (seq, entry, prev_hash, hash) VALUES (?, ?, ?, ?)",
          );
          const reason = this.#statement("INSERT OR IGNORE INTO decision_reasons (code, seq) VALUES (?, ?)");
          stored.forEach((entry, i) => {
            const body = prepared[i];
            if (body === undefined) return;
            try {
              insert.run(entry.seq, body.text, entry.prev_hash, entry.hash);
            } catch (error) {
              if (sqliteUnique(error)) throw duplicateDecision(body.body.decision_id, error);
              throw error;
            }
            for (const code of body.codes) reason.run(code, entry.seq);
          });
          return stored;
        })
        .immediate(),
    );
  }

  /** Reads the record, applies the update and writes it back, under the write lock. */
  async decideApproval(
    id: string,
    expectedStatus: "pending",
    update: ApprovalUpdate,
    now: Date = this.clock(),
  ): Promise<ApprovalRecord | undefined> {
    return this.#run("decide an approval", () =>
      this.#db
        .transaction((): ApprovalRecord | undefined => {
          const [row] = this.#all(sql`SELECT seq, record FROM approvals WHERE id = ${id}`);
          if (row === undefined) return undefined;
          const current = this.approvalOf(row);
          if (current.status !== expectedStatus) return undefined;
          const record = jsonText({ ...current, ...decidedFields(update) }, "/approval");
          const [updated] = this.#all(
            sql`UPDATE approvals SET status = ${update.status}, grant_jti = ${update.grant?.jti ?? null}, record = ${record}
             WHERE id = ${id} AND status = ${expectedStatus} AND (${update.status} = 'expired' OR expires_at > ${now.getTime()})
             RETURNING seq, record`,
          );
          return updated === undefined ? undefined : this.approvalOf(updated);
        })
        .immediate(),
    );
  }

  async claimIdempotency(
    subject: string,
    key: string,
    requestDigest: string,
    expiresAt: Date,
    now: Date = this.clock(),
  ): Promise<IdempotencyClaim> {
    return this.#run("claim an idempotency key", () =>
      this.#db
        .transaction((): IdempotencyClaim => {
          const claimed = this.#all(claimQuery(subject, key, requestDigest, expiresAt, now));
          if (claimed.length > 0) return { state: "claimed" };
          return heldClaim(this.#all(claimRowQuery(subject, key))[0]);
        })
        .immediate(),
    );
  }

  // ------------------------------------------------------------------------------ helpers

  protected async rows(what: string, query: Sql): Promise<unknown[]> {
    return this.#run(what, () => this.#all(query));
  }

  protected async execute(what: string, query: Sql): Promise<number> {
    return this.#run(what, () => {
      const { text, values } = query.render(sqliteDialect.placeholder);
      return this.#statement(text).run(...values).changes;
    });
  }

  #all(query: Sql): unknown[] {
    const { text, values } = query.render(sqliteDialect.placeholder);
    return this.#statement(text).all(...values);
  }

  #statement(text: string): Statement {
    let statement = this.#statements.get(text);
    if (statement === undefined) {
      statement = this.#db.prepare(text);
      this.#statements.set(text, statement);
    }
    return statement;
  }

  #run<T>(what: string, work: () => T): T {
    if (!this.#db.open) {
      throw new WritError("internal", `cannot ${what}: the store at ${this.location} is closed`, {
        suggestedFix: "open a new store (SqliteStore.open) instead of reusing a closed one",
      });
    }
    try {
      return work();
    } catch (error) {
      throw sqliteStoreError(error, what, this.#busyTimeoutMs, this.location);
    }
  }
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
