/**
 * The embedded `Store`: one SQLite file in WAL mode, through better-sqlite3 (synchronous calls
 * behind the async interface). Every change is one transaction; writes that read before they
 * write take the write lock up front (`BEGIN IMMEDIATE`), so two processes sharing a file
 * serialize instead of failing half-way.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import { type Migration, sqliteMigrations } from "./migrations.ts";
import { decodeCursor, encodeCursor, normalizeFilter, pageSize, readBatchSize } from "./paging.ts";
import {
  approvalOfJson,
  chainEntry,
  checkExpectedRevision,
  checkGrantUse,
  decidedFields,
  duplicateApproval,
  duplicateDecision,
  entryOf,
  grantRowSchema,
  idempotencyRowSchema,
  jsonText,
  lastRowSchema,
  parseApprovalFilter,
  parseResourceWrite,
  parseStored,
  pendingApproval,
  prepareEntries,
  resourceOf,
  usesRowSchema,
  versionRowSchema,
} from "./rows.ts";
import { GENESIS_HASH } from "./schema.ts";
import type {
  ApprovalFilter,
  ApprovalPage,
  ApprovalRecord,
  ApprovalUpdate,
  DecisionFilter,
  DecisionLogEntry,
  DecisionPage,
  GrantConsumption,
  IdempotencyClaim,
  NewApproval,
  NewDecisionEntry,
  ResourceWrite,
  Store,
  StoredResource,
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

const approvalRowSchema = z.object({ seq: z.number().int().positive(), record: z.string() });

type Statement = Database.Statement<unknown[], unknown>;

interface Statements {
  getResource: Statement;
  putResource: Statement;
  updateResource: Statement;
  consumeGrant: Statement;
  getGrant: Statement;
  pruneGrants: Statement;
  lastDecision: Statement;
  insertDecision: Statement;
  insertReason: Statement;
  getDecision: Statement;
  readDecisions: Statement;
  insertApproval: Statement;
  getApproval: Statement;
  decideApproval: Statement;
  getIdempotency: Statement;
  claimIdempotency: Statement;
  completeIdempotency: Statement;
  releaseIdempotency: Statement;
}

const RESOURCE_COLUMNS = "type, id, owner, tenant, revision, attributes, updated_at";
const DECISION_COLUMNS = "seq, entry, prev_hash, hash";

function prepare(db: Database.Database): Statements {
  return {
    getResource: db.prepare(`SELECT ${RESOURCE_COLUMNS} FROM resources WHERE type = ? AND id = ?`),
    putResource: db.prepare(
      `INSERT INTO resources (${RESOURCE_COLUMNS}) VALUES (@type, @id, @owner, @tenant, 1, @attributes, @updated_at)
       ON CONFLICT (type, id) DO UPDATE SET owner = excluded.owner, tenant = excluded.tenant,
         attributes = excluded.attributes, updated_at = excluded.updated_at, revision = resources.revision + 1
       RETURNING ${RESOURCE_COLUMNS}`,
    ),
    updateResource: db.prepare(
      `UPDATE resources SET attributes = @attributes, updated_at = @updated_at, revision = revision + 1
       WHERE type = @type AND id = @id AND revision = @expected
       RETURNING ${RESOURCE_COLUMNS}`,
    ),
    consumeGrant: db.prepare(
      `INSERT INTO grant_uses (jti, uses, max_uses, expires_at) VALUES (@jti, 1, @max_uses, @expires_at)
       ON CONFLICT (jti) DO UPDATE SET uses = grant_uses.uses + 1
         WHERE grant_uses.uses < grant_uses.max_uses AND grant_uses.expires_at > @now
       RETURNING uses`,
    ),
    getGrant: db.prepare("SELECT uses, max_uses, expires_at FROM grant_uses WHERE jti = ?"),
    pruneGrants: db.prepare("DELETE FROM grant_uses WHERE expires_at <= ?"),
    lastDecision: db.prepare("SELECT seq, hash FROM decisions ORDER BY seq DESC LIMIT 1"),
    insertDecision: db.prepare("INSERT INTO decisions (seq, entry, prev_hash, hash) VALUES (?, ?, ?, ?)"),
    insertReason: db.prepare("INSERT OR IGNORE INTO decision_reasons (code, seq) VALUES (?, ?)"),
    getDecision: db.prepare(`SELECT ${DECISION_COLUMNS} FROM decisions WHERE decision_id = ?`),
    readDecisions: db.prepare(
      `SELECT ${DECISION_COLUMNS} FROM decisions WHERE seq >= ? ORDER BY seq LIMIT ?`,
    ),
    insertApproval: db.prepare(
      `INSERT INTO approvals (id, tenant, requester, status, approver_roles, expires_at, record)
       VALUES (@id, @tenant, @requester, 'pending', @approver_roles, @expires_at, @record)
       RETURNING seq, record`,
    ),
    getApproval: db.prepare("SELECT seq, record FROM approvals WHERE id = ?"),
    decideApproval: db.prepare(
      `UPDATE approvals SET status = @status, record = @record
       WHERE id = @id AND status = @expected AND (@status = 'expired' OR expires_at > @now)
       RETURNING seq, record`,
    ),
    getIdempotency: db.prepare(
      "SELECT request_digest, state, outcome, expires_at FROM idempotency WHERE subject = ? AND key = ?",
    ),
    claimIdempotency: db.prepare(
      `INSERT INTO idempotency (subject, key, request_digest, state, outcome, created_at, expires_at)
       VALUES (@subject, @key, @digest, 'pending', NULL, @now, @expires_at)
       ON CONFLICT (subject, key) DO UPDATE SET request_digest = excluded.request_digest,
         state = 'pending', outcome = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
         WHERE idempotency.expires_at <= @now`,
    ),
    completeIdempotency: db.prepare(
      "UPDATE idempotency SET state = 'done', outcome = @outcome WHERE subject = @subject AND key = @key",
    ),
    releaseIdempotency: db.prepare(
      "DELETE FROM idempotency WHERE subject = ? AND key = ? AND state = 'pending'",
    ),
  };
}

export class SqliteStore implements Store {
  /** The file path, or `:memory:`. */
  readonly location: string;
  /** The journal mode SQLite reports (`wal` for files, `memory` for `:memory:`). */
  readonly journalMode: string;
  /** The synchronous level SQLite reports: 2 = FULL, 1 = NORMAL. */
  readonly synchronous: number;
  readonly #db: Database.Database;
  readonly #now: () => Date;
  readonly #busyTimeoutMs: number;
  #statements: Statements | undefined;
  readonly #queries = new Map<string, Statement>();

  /** Opens (or creates) the database; call `migrate()` before use, or use `SqliteStore.open`. */
  constructor(location: string, options: SqliteStoreOptions = {}) {
    this.location = location;
    this.#now = options.now ?? (() => new Date());
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
      throw storeError(error, `open the SQLite database at ${location}`, this.#busyTimeoutMs);
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
          const applied = new Set(
            this.#db
              .prepare("SELECT version FROM schema_migrations")
              .all()
              .map((row) => parseStored(versionRowSchema, row, "a schema_migrations row").version),
          );
          const known = sqliteMigrations.reduce((max, m: Migration) => Math.max(max, m.version), 0);
          const newest = Math.max(0, ...applied);
          if (newest > known) {
            throw new WritError(
              "internal",
              `the database at ${this.location} has schema version ${newest}, newer than this Writ knows (${known})`,
              { suggestedFix: "run a Writ release at least as new as the one that last wrote this file" },
            );
          }
          const record = this.#db.prepare(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
          );
          for (const migration of sqliteMigrations) {
            if (applied.has(migration.version)) continue;
            this.#db.exec(migration.sql);
            record.run(migration.version, migration.name, this.#now().toISOString());
          }
        })
        .immediate();
    });
    this.#statements = undefined;
    this.#queries.clear();
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }

  // ------------------------------------------------------------------------------ resources

  async getResource(type: string, id: string): Promise<StoredResource | undefined> {
    return this.#run("read a resource", () => {
      const row = this.#stmts().getResource.get(type, id);
      return row === undefined ? undefined : resourceOf(row);
    });
  }

  async putResource(resource: ResourceWrite): Promise<StoredResource> {
    const parsed = parseResourceWrite(resource);
    const attributes = parsed.attributes;
    return this.#run("write a resource", () =>
      resourceOf(
        this.#stmts().putResource.get({
          ...parsed.resource,
          attributes,
          updated_at: this.#now().toISOString(),
        }),
      ),
    );
  }

  async updateResourceAttributes(
    type: string,
    id: string,
    expectedRevision: number,
    attributes: Record<string, unknown>,
  ): Promise<StoredResource | undefined> {
    checkExpectedRevision(expectedRevision);
    const text = jsonText(attributes, "/attributes");
    return this.#run("update a resource", () => {
      const row = this.#stmts().updateResource.get({
        type,
        id,
        expected: expectedRevision,
        attributes: text,
        updated_at: this.#now().toISOString(),
      });
      return row === undefined ? undefined : resourceOf(row);
    });
  }

  // ------------------------------------------------------------------------------ grants

  async consumeGrant(
    jti: string,
    maxUses: number,
    expiresAt: Date,
    now: Date = this.#now(),
  ): Promise<GrantConsumption> {
    checkGrantUse(jti, maxUses, expiresAt, now);
    if (now.getTime() >= expiresAt.getTime()) return { ok: false, reason: "expired" };
    return this.#run("record a grant use", () =>
      this.#db
        .transaction((): GrantConsumption => {
          const stmts = this.#stmts();
          const row = stmts.consumeGrant.get({
            jti,
            max_uses: maxUses,
            expires_at: expiresAt.getTime(),
            now: now.getTime(),
          });
          if (row !== undefined)
            return { ok: true, uses: parseStored(usesRowSchema, row, "a grant use").uses };
          const stored = parseStored(grantRowSchema, stmts.getGrant.get(jti), "a grant use");
          return { ok: false, reason: stored.expires_at <= now.getTime() ? "expired" : "exhausted" };
        })
        .immediate(),
    );
  }

  /** Deletes the use records of grants that expired at or before `now`; returns how many. */
  async pruneExpiredGrants(now: Date = this.#now()): Promise<number> {
    return this.#run("prune expired grant uses", () => this.#stmts().pruneGrants.run(now.getTime()).changes);
  }

  // ------------------------------------------------------------------------------ decision log

  async appendDecision(
    entry: NewDecisionEntry,
    computeHash: (entry: Omit<DecisionLogEntry, "hash">) => string,
  ): Promise<DecisionLogEntry> {
    const [stored] = await this.appendDecisions([entry], computeHash);
    return stored!;
  }

  /**
   * Appends several entries in one transaction (one sync to disk for all of them): the decision
   * log batches the appends that queue up while a write is in flight.
   */
  async appendDecisions(
    entries: readonly NewDecisionEntry[],
    computeHash: (entry: Omit<DecisionLogEntry, "hash">) => string,
  ): Promise<DecisionLogEntry[]> {
    const bodies = prepareEntries(entries);
    return this.#run("append to the decision log", () =>
      this.#db
        .transaction((): DecisionLogEntry[] => {
          const stmts = this.#stmts();
          const lastRow = stmts.lastDecision.get();
          const last =
            lastRow === undefined ? undefined : parseStored(lastRowSchema, lastRow, "the last decision");
          let seq = last?.seq ?? 0;
          let prevHash = last?.hash ?? GENESIS_HASH;
          const stored: DecisionLogEntry[] = [];
          for (const prepared of bodies) {
            seq += 1;
            const entry = chainEntry(prepared, seq, prevHash, computeHash);
            try {
              stmts.insertDecision.run(seq, prepared.text, entry.prev_hash, entry.hash);
            } catch (error) {
              if (error instanceof Database.SqliteError && error.code === "SQLITE_CONSTRAINT_UNIQUE") {
                throw duplicateDecision(prepared.body.decision_id, error);
              }
              throw error;
            }
            for (const code of prepared.codes) stmts.insertReason.run(code, seq);
            stored.push(entry);
            prevHash = entry.hash;
          }
          return stored;
        })
        .immediate(),
    );
  }

  async getDecision(decisionId: string): Promise<DecisionLogEntry | undefined> {
    return this.#run("read a decision", () => {
      const row = this.#stmts().getDecision.get(decisionId);
      return row === undefined ? undefined : entryOf(row);
    });
  }

  async queryDecisions(filter: DecisionFilter, limit: number, cursor?: string): Promise<DecisionPage> {
    const f = normalizeFilter(filter);
    const size = pageSize(limit);
    const before = cursor === undefined ? undefined : decodeCursor(cursor);
    const where: string[] = [];
    const params: Record<string, string | number> = { limit: size + 1 };
    const equal = (column: string, name: string, value: string | undefined) => {
      if (value === undefined) return;
      where.push(`${column} = @${name}`);
      params[name] = value;
    };
    equal("subject", "subject", f.subject);
    equal("tenant", "tenant", f.tenant);
    equal("action", "action", f.action);
    equal("decision", "decision", f.decision);
    equal("resource_type", "resource_type", f.resourceType);
    equal("resource_id", "resource_id", f.resourceId);
    if (f.reason !== undefined) {
      // The side table narrows by index; the entry itself confirms.
      where.push(
        `seq IN (SELECT seq FROM decision_reasons WHERE code = @reason)
         AND EXISTS (SELECT 1 FROM json_each(decisions.entry, '$.reasons') AS r WHERE json_extract(r.value, '$.code') = @reason)`,
      );
      params.reason = f.reason;
    }
    if (f.since !== undefined) {
      where.push("timestamp >= @since");
      params.since = f.since;
    }
    if (f.until !== undefined) {
      where.push("timestamp < @until");
      params.until = f.until;
    }
    if (before !== undefined) {
      where.push("seq < @before");
      params.before = before;
    }
    const sql = `SELECT ${DECISION_COLUMNS} FROM decisions ${where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`}
      ORDER BY seq DESC LIMIT @limit`;
    return this.#run("query the decision log", () => {
      const rows = this.#query(sql).all(params);
      const entries = rows.slice(0, size).map(entryOf);
      const last = entries.at(-1);
      return rows.length > size && last !== undefined
        ? { entries, next_cursor: encodeCursor(last.seq) }
        : { entries };
    });
  }

  async readDecisions(fromSeq: number, limit: number): Promise<DecisionLogEntry[]> {
    const size = readBatchSize(fromSeq, limit);
    return this.#run("read the decision log", () =>
      this.#stmts().readDecisions.all(fromSeq, size).map(entryOf),
    );
  }

  // ------------------------------------------------------------------------------ approvals

  async createApproval(request: NewApproval): Promise<ApprovalRecord> {
    const { record, expiresAtMs: expiresAt } = pendingApproval(request);
    const text = jsonText(record, "/approval");
    return this.#run("store an approval request", () => {
      try {
        return approvalOf(
          this.#stmts().insertApproval.get({
            id: request.id,
            tenant: request.requester.tenant,
            requester: request.requester.id,
            approver_roles: JSON.stringify(request.approver_roles),
            expires_at: expiresAt,
            record: text,
          }),
        );
      } catch (error) {
        if (error instanceof Database.SqliteError && error.code === "SQLITE_CONSTRAINT_UNIQUE") {
          throw duplicateApproval(request.id, error);
        }
        throw error;
      }
    });
  }

  async getApproval(id: string): Promise<ApprovalRecord | undefined> {
    return this.#run("read an approval", () => {
      const row = this.#stmts().getApproval.get(id);
      return row === undefined ? undefined : approvalOf(row);
    });
  }

  async listApprovals(filter: ApprovalFilter, limit: number, cursor?: string): Promise<ApprovalPage> {
    const f = parseApprovalFilter(filter);
    const size = pageSize(limit);
    const before = cursor === undefined ? undefined : decodeCursor(cursor);
    const where: string[] = [];
    const params: Record<string, string | number> = { limit: size + 1 };
    if (f.status !== undefined) {
      where.push("status = @status");
      params.status = f.status;
    }
    if (f.tenant !== undefined) {
      where.push("tenant = @tenant");
      params.tenant = f.tenant;
    }
    const who: string[] = [];
    if (f.requester !== undefined) {
      who.push("requester = @requester");
      params.requester = f.requester;
    }
    if (f.approverRoles !== undefined) {
      who.push(
        "EXISTS (SELECT 1 FROM json_each(approvals.approver_roles) AS r WHERE r.value IN (SELECT value FROM json_each(@roles)))",
      );
      params.roles = JSON.stringify(f.approverRoles);
    }
    if (who.length > 0) where.push(`(${who.join(" OR ")})`);
    if (before !== undefined) {
      where.push("seq < @before");
      params.before = before;
    }
    const sql = `SELECT seq, record FROM approvals ${where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`}
      ORDER BY seq DESC LIMIT @limit`;
    return this.#run("list approvals", () => {
      const rows = this.#query(sql).all(params);
      const page = rows.slice(0, size);
      const approvals = page.map(approvalOf);
      const lastRow = page.at(-1);
      return rows.length > size && lastRow !== undefined
        ? {
            approvals,
            next_cursor: encodeCursor(parseStored(approvalRowSchema, lastRow, "an approval row").seq),
          }
        : { approvals };
    });
  }

  async decideApproval(
    id: string,
    expectedStatus: "pending",
    update: ApprovalUpdate,
    now: Date = this.#now(),
  ): Promise<ApprovalRecord | undefined> {
    return this.#run("decide an approval", () =>
      this.#db
        .transaction((): ApprovalRecord | undefined => {
          const stmts = this.#stmts();
          const row = stmts.getApproval.get(id);
          if (row === undefined) return undefined;
          const current = approvalOf(row);
          if (current.status !== expectedStatus) return undefined;
          const next: ApprovalRecord = { ...current, ...decidedFields(update) };
          const updated = stmts.decideApproval.get({
            id,
            status: update.status,
            expected: expectedStatus,
            now: now.getTime(),
            record: jsonText(next, "/approval"),
          });
          return updated === undefined ? undefined : approvalOf(updated);
        })
        .immediate(),
    );
  }

  // ------------------------------------------------------------------------------ idempotency

  async claimIdempotency(
    subject: string,
    key: string,
    requestDigest: string,
    expiresAt: Date,
    now: Date = this.#now(),
  ): Promise<IdempotencyClaim> {
    return this.#run("claim an idempotency key", () =>
      this.#db
        .transaction((): IdempotencyClaim => {
          const stmts = this.#stmts();
          const inserted = stmts.claimIdempotency.run({
            subject,
            key,
            digest: requestDigest,
            now: now.getTime(),
            expires_at: expiresAt.getTime(),
          });
          if (inserted.changes > 0) return { state: "claimed" };
          const row = parseStored(
            idempotencyRowSchema,
            stmts.getIdempotency.get(subject, key),
            "an idempotency key",
          );
          if (row.state === "pending") return { state: "pending", request_digest: row.request_digest };
          return {
            state: "done",
            request_digest: row.request_digest,
            outcome: row.outcome === null ? null : JSON.parse(row.outcome),
          };
        })
        .immediate(),
    );
  }

  async completeIdempotency(subject: string, key: string, outcome: unknown): Promise<void> {
    const text = jsonText(outcome, "/outcome");
    this.#run("store an idempotent outcome", () => {
      this.#stmts().completeIdempotency.run({ subject, key, outcome: text });
    });
  }

  async releaseIdempotency(subject: string, key: string): Promise<void> {
    this.#run("release an idempotency key", () => {
      this.#stmts().releaseIdempotency.run(subject, key);
    });
  }

  // ------------------------------------------------------------------------------ helpers

  #stmts(): Statements {
    this.#statements ??= prepare(this.#db);
    return this.#statements;
  }

  #query(sql: string): Statement {
    let statement = this.#queries.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#queries.set(sql, statement);
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
      throw storeError(error, what, this.#busyTimeoutMs, this.location);
    }
  }
}

function approvalOf(row: unknown): ApprovalRecord {
  const r = parseStored(approvalRowSchema, row, "an approval row");
  let json: unknown;
  try {
    json = JSON.parse(r.record);
  } catch {
    json = undefined;
  }
  return approvalOfJson(json, r.seq);
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

/** Maps what SQLite (or anything else) threw to a `WritError` that says what to do. */
function storeError(error: unknown, what: string, busyTimeoutMs: number, location?: string): WritError {
  if (error instanceof WritError) return error;
  const where = location === undefined ? "" : ` (${location})`;
  if (error instanceof Database.SqliteError) {
    const code = error.code;
    if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
      return new WritError(
        "backend_unavailable",
        `cannot ${what}: the database${where} stayed locked for ${busyTimeoutMs} ms`,
        {
          retryable: true,
          suggestedFix:
            "retry; if it keeps happening, look for another process holding a long write transaction on the file",
          cause: error,
        },
      );
    }
    if (code.startsWith("SQLITE_FULL") || code.startsWith("SQLITE_IOERR")) {
      return new WritError(
        "backend_unavailable",
        `cannot ${what}: the disk failed or is full${where}: ${error.message}`,
        {
          retryable: true,
          suggestedFix: "free disk space or fix the disk, then retry",
          cause: error,
        },
      );
    }
    if (
      code.startsWith("SQLITE_READONLY") ||
      code.startsWith("SQLITE_CANTOPEN") ||
      code.startsWith("SQLITE_PERM")
    ) {
      return new WritError(
        "internal",
        `cannot ${what}: the database file cannot be written${where}: ${error.message}`,
        {
          suggestedFix: "make the database file and its folder writable by the Writ process",
          cause: error,
        },
      );
    }
    if (code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_NOTADB")) {
      return new WritError("internal", `cannot ${what}: the file is not a valid SQLite database${where}`, {
        suggestedFix: "point Writ at its own database file, or restore the file from a backup",
        cause: error,
      });
    }
    if (/no such table|no such column/.test(error.message)) {
      return new WritError("internal", `cannot ${what}: the database has no Writ schema${where}`, {
        suggestedFix: "call migrate() (or open the store with SqliteStore.open) before using it",
        cause: error,
      });
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return new WritError("internal", `cannot ${what}${where}: ${message}`, {
    suggestedFix: "check the server log for the cause, fix it and retry",
    cause: error,
  });
}
