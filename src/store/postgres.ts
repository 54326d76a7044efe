/**
 * The `Store` for several Writ instances: PostgreSQL through a node-postgres pool. Everything that
 * must hold across instances is one atomic statement or one transaction in the database:
 *
 * - a grant use, an approval decision and an idempotency claim are each a single conditional
 *   statement (`INSERT … ON CONFLICT … DO UPDATE … WHERE`, `UPDATE … WHERE status = 'pending'`),
 *   so of any number of racing instances exactly one wins;
 * - the decision log is one global chain: an append takes a transaction-scoped advisory lock,
 *   reads the head (seq, hash) and inserts after it, so seq has no gaps and every entry links to
 *   the one before it, whichever instance wrote either;
 * - migrations run under a session advisory lock, one instance at a time.
 */
import pg from "pg";
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import type { KeySetStorage } from "../grants/key-storage.ts";
import { decodeCursor, encodeCursor, normalizeFilter, pageSize, readBatchSize } from "./paging.ts";
import { postgresStoreError } from "./postgres-errors.ts";
import { PostgresKeySetStorage } from "./postgres-key-set.ts";
import { postgresMigrations } from "./postgres-migrations.ts";
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

export interface PostgresStoreOptions {
  /** Connections in the pool (default 10). */
  maxConnections?: number;
  /** How long to wait for a connection, from the pool or the server (default 5000 ms). */
  connectTimeoutMs?: number;
  /** The clock for `updated_at` and grant expiry (default: the system clock). */
  now?: () => Date;
}

/** Advisory lock keys (any two 64-bit numbers no other application on the database uses). */
const MIGRATION_LOCK = 7_283_640_001;
const DECISION_LOG_LOCK = 7_283_640_002;

const INT8_OID = 20;

/** BEGIN, the log's lock (held to COMMIT) and its head, in one message. */
const LOCK_AND_READ_HEAD = `BEGIN; SELECT pg_advisory_xact_lock(${DECISION_LOG_LOCK}); SELECT seq, hash FROM decisions ORDER BY seq DESC LIMIT 1`;

/** A batch of chained entries and their reason codes, in one statement. */
const INSERT_DECISIONS = `WITH inserted AS (
  INSERT INTO decisions (seq, entry, prev_hash, hash)
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])
  RETURNING seq
)
INSERT INTO decision_reasons (code, seq)
SELECT code, seq FROM unnest($5::text[], $6::bigint[]) AS reason(code, seq)
ON CONFLICT DO NOTHING`;

const queryResultsSchema = z.array(z.object({ rows: z.array(z.unknown()) }));

/** The rows of the last statement of a multi-statement query (node-postgres answers with an array). */
function headRows(results: unknown): unknown[] {
  const parsed = queryResultsSchema.safeParse(results);
  if (!parsed.success)
    throw new Error("node-postgres did not answer a multi-statement query with its results");
  return parsed.data.at(-1)?.rows ?? [];
}

/** BIGINT columns as numbers: every one Writ stores (seq, revision, milliseconds) is a safe integer. */
function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) {
    throw new WritError("internal", `a BIGINT column holds ${text}, beyond what Writ stores`, {
      suggestedFix: "the database was changed outside Writ: restore it from a backup",
    });
  }
  return value;
}

const typeParsers: pg.CustomTypesConfig = {
  getTypeParser: (oid: number, format?: "text" | "binary") =>
    oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format ?? "text"),
};

const approvalRowSchema = z.object({ seq: z.number().int().positive(), record: z.unknown() });

const RESOURCE_COLUMNS = "type, id, owner, tenant, revision, attributes, updated_at";
const DECISION_COLUMNS = "seq, entry, prev_hash, hash";

/** A URL to show in messages: the password replaced. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(an unparsable URL)";
  }
}

export class PostgresStore implements Store {
  /** The database URL with its password hidden. */
  readonly location: string;
  readonly #pool: pg.Pool;
  readonly #now: () => Date;
  #closed = false;

  /** Connects lazily; call `migrate()` before use, or use `PostgresStore.open`. */
  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.location = redactedUrl(url);
    this.#now = options.now ?? (() => new Date());
    const max = options.maxConnections ?? 10;
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new WritError("invalid_argument", "maxConnections must be a positive integer", {
        suggestedFix: "pass a pool size such as 10",
      });
    }
    this.#pool = new pg.Pool({
      connectionString: url,
      max,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      types: typeParsers,
      // An instance that hangs (or whose network drops) inside a transaction must not hold the
      // decision log's lock, and with it every other instance's appends, for long.
      keepAlive: true,
      idle_in_transaction_session_timeout: 10_000,
    });
    // An idle connection the server dropped: the pool discards it; the next query reconnects.
    this.#pool.on("error", () => {});
  }

  /** Connects and applies the migrations. */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const store = new PostgresStore(url, options);
    try {
      await store.migrate();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /** The grant signing key set every instance on this database shares. */
  grantKeySet(): KeySetStorage {
    return new PostgresKeySetStorage(this.#pool, this.location);
  }

  async migrate(): Promise<void> {
    await this.#withClient("apply the schema migrations", async (client) => {
      await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
      try {
        await client.query(
          `CREATE TABLE IF NOT EXISTS schema_migrations (
             version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
        );
        const rows = (await client.query("SELECT version FROM schema_migrations")).rows;
        const applied = new Set(
          rows.map((row) => parseStored(versionRowSchema, row, "a schema_migrations row").version),
        );
        const known = postgresMigrations.reduce((max, m) => Math.max(max, m.version), 0);
        const newest = Math.max(0, ...applied);
        if (newest > known) {
          throw new WritError(
            "internal",
            `the database at ${this.location} has schema version ${newest}, newer than this Writ knows (${known})`,
            {
              suggestedFix: "run a Writ release at least as new as the one that last migrated this database",
            },
          );
        }
        for (const migration of postgresMigrations) {
          if (applied.has(migration.version)) continue;
          await client.query("BEGIN");
          try {
            await client.query(migration.sql);
            await client.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [
              migration.version,
              migration.name,
            ]);
            await client.query("COMMIT");
          } catch (error) {
            await client.query("ROLLBACK");
            throw error;
          }
        }
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
      }
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }

  // ------------------------------------------------------------------------------ resources

  async getResource(type: string, id: string): Promise<StoredResource | undefined> {
    const rows = await this.#query(
      "read a resource",
      `SELECT ${RESOURCE_COLUMNS} FROM resources WHERE type = $1 AND id = $2`,
      [type, id],
    );
    return rows[0] === undefined ? undefined : resourceOf(rows[0]);
  }

  async putResource(resource: ResourceWrite): Promise<StoredResource> {
    const { resource: r, attributes } = parseResourceWrite(resource);
    const rows = await this.#query(
      "write a resource",
      `INSERT INTO resources (${RESOURCE_COLUMNS}) VALUES ($1, $2, $3, $4, 1, $5, $6)
       ON CONFLICT (type, id) DO UPDATE SET owner = excluded.owner, tenant = excluded.tenant,
         attributes = excluded.attributes, updated_at = excluded.updated_at, revision = resources.revision + 1
       RETURNING ${RESOURCE_COLUMNS}`,
      [r.type, r.id, r.owner, r.tenant, attributes, this.#now().toISOString()],
    );
    return resourceOf(rows[0]);
  }

  async updateResourceAttributes(
    type: string,
    id: string,
    expectedRevision: number,
    attributes: Record<string, unknown>,
  ): Promise<StoredResource | undefined> {
    checkExpectedRevision(expectedRevision);
    const rows = await this.#query(
      "update a resource",
      `UPDATE resources SET attributes = $4, updated_at = $5, revision = revision + 1
       WHERE type = $1 AND id = $2 AND revision = $3
       RETURNING ${RESOURCE_COLUMNS}`,
      [type, id, expectedRevision, jsonText(attributes, "/attributes"), this.#now().toISOString()],
    );
    return rows[0] === undefined ? undefined : resourceOf(rows[0]);
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
    const used = await this.#query(
      "record a grant use",
      `INSERT INTO grant_uses (jti, uses, max_uses, expires_at) VALUES ($1, 1, $2, $3)
       ON CONFLICT (jti) DO UPDATE SET uses = grant_uses.uses + 1
         WHERE grant_uses.uses < grant_uses.max_uses AND grant_uses.expires_at > $4
       RETURNING uses`,
      [jti, maxUses, expiresAt.getTime(), now.getTime()],
    );
    if (used[0] !== undefined) {
      return { ok: true, uses: parseStored(usesRowSchema, used[0], "a grant use").uses };
    }
    // Refused: the row exists (the statement saw it); say why. Rows are only deleted once expired.
    const rows = await this.#query(
      "read a grant use",
      "SELECT uses, max_uses, expires_at FROM grant_uses WHERE jti = $1",
      [jti],
    );
    if (rows[0] === undefined) return { ok: false, reason: "expired" };
    const stored = parseStored(grantRowSchema, rows[0], "a grant use");
    return { ok: false, reason: stored.expires_at <= now.getTime() ? "expired" : "exhausted" };
  }

  /** Deletes the use records of grants that expired at or before `now`; returns how many. */
  async pruneExpiredGrants(now: Date = this.#now()): Promise<number> {
    return this.#withClient("prune expired grant uses", async (client) => {
      const result = await client.query("DELETE FROM grant_uses WHERE expires_at <= $1", [now.getTime()]);
      return result.rowCount ?? 0;
    });
  }

  // ------------------------------------------------------------------------------ decision log

  async appendDecision(
    entry: NewDecisionEntry,
    computeHash: (entry: Omit<DecisionLogEntry, "hash">) => string,
  ): Promise<DecisionLogEntry> {
    const [stored] = await this.appendDecisions([entry], computeHash);
    if (stored === undefined) throw new Error("appendDecisions returned nothing for one entry");
    return stored;
  }

  /**
   * Appends several entries in one transaction (one commit for all of them), after the global
   * head of the log: the advisory lock makes appends from every instance take turns.
   */
  async appendDecisions(
    entries: readonly NewDecisionEntry[],
    computeHash: (entry: Omit<DecisionLogEntry, "hash">) => string,
  ): Promise<DecisionLogEntry[]> {
    const prepared = prepareEntries(entries);
    if (prepared.length === 0) return [];
    // Three round trips hold the lock: the head (with BEGIN and the lock, one simple-protocol
    // message), the inserts (one prepared statement), COMMIT.
    return this.#withClient("append to the decision log", async (client) => {
      let committed = false;
      try {
        const head = headRows(await client.query(LOCK_AND_READ_HEAD))[0];
        const last = head === undefined ? undefined : parseStored(lastRowSchema, head, "the last decision");
        let seq = last?.seq ?? 0;
        let prevHash = last?.hash ?? GENESIS_HASH;
        const stored: DecisionLogEntry[] = [];
        for (const entry of prepared) {
          seq += 1;
          const chained = chainEntry(entry, seq, prevHash, computeHash);
          stored.push(chained);
          prevHash = chained.hash;
        }
        const codes = stored.flatMap((entry, i) =>
          [...(prepared[i]?.codes ?? [])].map((code) => ({ code, seq: entry.seq })),
        );
        try {
          await client.query({
            name: "writ_append_decisions",
            text: INSERT_DECISIONS,
            values: [
              stored.map((entry) => entry.seq),
              prepared.map((entry) => entry.text),
              stored.map((entry) => entry.prev_hash),
              stored.map((entry) => entry.hash),
              codes.map((c) => c.code),
              codes.map((c) => c.seq),
            ],
          });
        } catch (error) {
          if (error instanceof pg.DatabaseError && error.code === "23505") {
            const id = /\(decision_id\)=\((.*)\)/.exec(error.detail ?? "")?.[1];
            throw duplicateDecision(id ?? "(one of the batch)", error);
          }
          throw error;
        }
        await client.query("COMMIT");
        committed = true;
        return stored;
      } finally {
        if (!committed) await client.query("ROLLBACK").catch(() => {});
      }
    });
  }

  async getDecision(decisionId: string): Promise<DecisionLogEntry | undefined> {
    const rows = await this.#query(
      "read a decision",
      `SELECT ${DECISION_COLUMNS} FROM decisions WHERE decision_id = $1`,
      [decisionId],
    );
    return rows[0] === undefined ? undefined : entryOf(rows[0]);
  }

  async queryDecisions(filter: DecisionFilter, limit: number, cursor?: string): Promise<DecisionPage> {
    const f = normalizeFilter(filter);
    const size = pageSize(limit);
    const before = cursor === undefined ? undefined : decodeCursor(cursor);
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (condition: (p: string) => string, value: unknown) => {
      params.push(value);
      where.push(condition(`$${params.length}`));
    };
    const equal = (column: string, value: string | undefined) => {
      if (value !== undefined) add((p) => `${column} = ${p}`, value);
    };
    equal("subject", f.subject);
    equal("tenant", f.tenant);
    equal("action", f.action);
    equal("decision", f.decision);
    equal("resource_type", f.resourceType);
    equal("resource_id", f.resourceId);
    if (f.reason !== undefined) {
      // The side table narrows by index; the entry itself confirms.
      add(
        (p) => `seq IN (SELECT seq FROM decision_reasons WHERE code = ${p})
          AND EXISTS (SELECT 1 FROM jsonb_array_elements(decisions.entry::jsonb -> 'reasons') AS r WHERE r ->> 'code' = ${p})`,
        f.reason,
      );
    }
    if (f.since !== undefined) add((p) => `logged_at >= ${p}`, f.since);
    if (f.until !== undefined) add((p) => `logged_at < ${p}`, f.until);
    if (before !== undefined) add((p) => `seq < ${p}`, before);
    params.push(size + 1);
    const sql = `SELECT ${DECISION_COLUMNS} FROM decisions ${where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`}
      ORDER BY seq DESC LIMIT $${params.length}`;
    const rows = await this.#query("query the decision log", sql, params);
    const entries = rows.slice(0, size).map(entryOf);
    const last = entries.at(-1);
    return rows.length > size && last !== undefined
      ? { entries, next_cursor: encodeCursor(last.seq) }
      : { entries };
  }

  async readDecisions(fromSeq: number, limit: number): Promise<DecisionLogEntry[]> {
    const size = readBatchSize(fromSeq, limit);
    const rows = await this.#query(
      "read the decision log",
      `SELECT ${DECISION_COLUMNS} FROM decisions WHERE seq >= $1 ORDER BY seq LIMIT $2`,
      [fromSeq, size],
    );
    return rows.map(entryOf);
  }

  // ------------------------------------------------------------------------------ approvals

  async createApproval(request: NewApproval): Promise<ApprovalRecord> {
    const { record, expiresAtMs } = pendingApproval(request);
    const text = jsonText(record, "/approval");
    try {
      const rows = await this.#query(
        "store an approval request",
        `INSERT INTO approvals (id, tenant, requester, status, approver_roles, expires_at, record)
         VALUES ($1, $2, $3, 'pending', $4, $5, $6::jsonb)
         RETURNING seq, record`,
        [
          request.id,
          request.requester.tenant,
          request.requester.id,
          request.approver_roles,
          expiresAtMs,
          text,
        ],
      );
      return approvalOf(rows[0]);
    } catch (error) {
      if (
        error instanceof WritError &&
        error.cause instanceof pg.DatabaseError &&
        error.cause.code === "23505"
      ) {
        throw duplicateApproval(request.id, error.cause);
      }
      throw error;
    }
  }

  async getApproval(id: string): Promise<ApprovalRecord | undefined> {
    const rows = await this.#query("read an approval", "SELECT seq, record FROM approvals WHERE id = $1", [
      id,
    ]);
    return rows[0] === undefined ? undefined : approvalOf(rows[0]);
  }

  async listApprovals(filter: ApprovalFilter, limit: number, cursor?: string): Promise<ApprovalPage> {
    const f = parseApprovalFilter(filter);
    const size = pageSize(limit);
    const before = cursor === undefined ? undefined : decodeCursor(cursor);
    const where: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (f.status !== undefined) where.push(`status = ${param(f.status)}`);
    if (f.tenant !== undefined) where.push(`tenant = ${param(f.tenant)}`);
    const who: string[] = [];
    if (f.requester !== undefined) who.push(`requester = ${param(f.requester)}`);
    if (f.approverRoles !== undefined) who.push(`approver_roles && ${param(f.approverRoles)}::text[]`);
    if (who.length > 0) where.push(`(${who.join(" OR ")})`);
    if (before !== undefined) where.push(`seq < ${param(before)}`);
    const sql = `SELECT seq, record FROM approvals ${where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`}
      ORDER BY seq DESC LIMIT ${param(size + 1)}`;
    const rows = await this.#query("list approvals", sql, params);
    const page = rows.slice(0, size);
    const approvals = page.map(approvalOf);
    const lastRow = page.at(-1);
    return rows.length > size && lastRow !== undefined
      ? {
          approvals,
          next_cursor: encodeCursor(parseStored(approvalRowSchema, lastRow, "an approval row").seq),
        }
      : { approvals };
  }

  /** One compare-and-swap statement: of any number of racing deciders, exactly one gets the row. */
  async decideApproval(
    id: string,
    expectedStatus: "pending",
    update: ApprovalUpdate,
    now: Date = this.#now(),
  ): Promise<ApprovalRecord | undefined> {
    const patch = jsonText(decidedFields(update), "/update");
    const rows = await this.#query(
      "decide an approval",
      `UPDATE approvals SET status = $2, record = record || $4::jsonb
       WHERE id = $1 AND status = $3 AND ($2 = 'expired' OR expires_at > $5)
       RETURNING seq, record`,
      [id, update.status, expectedStatus, patch, now.getTime()],
    );
    return rows[0] === undefined ? undefined : approvalOf(rows[0]);
  }

  // ------------------------------------------------------------------------------ idempotency

  async claimIdempotency(
    subject: string,
    key: string,
    requestDigest: string,
    expiresAt: Date,
    now: Date = this.#now(),
  ): Promise<IdempotencyClaim> {
    // The claim is one statement; when it loses, the winner's row is read. Should the winner
    // release its claim in between, the claim is tried again.
    for (let attempt = 0; attempt < 5; attempt++) {
      const claimed = await this.#query(
        "claim an idempotency key",
        `INSERT INTO idempotency (subject, key, request_digest, state, outcome, created_at, expires_at)
         VALUES ($1, $2, $3, 'pending', NULL, $4, $5)
         ON CONFLICT (subject, key) DO UPDATE SET request_digest = excluded.request_digest,
           state = 'pending', outcome = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
           WHERE idempotency.expires_at <= $4
         RETURNING 1`,
        [subject, key, requestDigest, now.getTime(), expiresAt.getTime()],
      );
      if (claimed.length > 0) return { state: "claimed" };
      const rows = await this.#query(
        "read an idempotency key",
        "SELECT request_digest, state, outcome, expires_at FROM idempotency WHERE subject = $1 AND key = $2",
        [subject, key],
      );
      if (rows[0] === undefined) continue;
      const row = parseStored(idempotencyRowSchema, rows[0], "an idempotency key");
      if (row.state === "pending") return { state: "pending", request_digest: row.request_digest };
      return {
        state: "done",
        request_digest: row.request_digest,
        outcome: row.outcome === null ? null : JSON.parse(row.outcome),
      };
    }
    throw new WritError("backend_unavailable", `idempotency key ${key} kept changing while it was claimed`, {
      retryable: true,
      suggestedFix: "retry the request with the same Idempotency-Key",
    });
  }

  async completeIdempotency(subject: string, key: string, outcome: unknown): Promise<void> {
    await this.#query(
      "store an idempotent outcome",
      "UPDATE idempotency SET state = 'done', outcome = $3 WHERE subject = $1 AND key = $2",
      [subject, key, jsonText(outcome, "/outcome")],
    );
  }

  async releaseIdempotency(subject: string, key: string): Promise<void> {
    await this.#query(
      "release an idempotency key",
      "DELETE FROM idempotency WHERE subject = $1 AND key = $2 AND state = 'pending'",
      [subject, key],
    );
  }

  // ------------------------------------------------------------------------------ helpers

  #checkOpen(what: string): void {
    if (this.#closed) {
      throw new WritError("internal", `cannot ${what}: the store at ${this.location} is closed`, {
        suggestedFix: "open a new store (PostgresStore.open) instead of reusing a closed one",
      });
    }
  }

  async #query(what: string, sql: string, params: unknown[]): Promise<unknown[]> {
    this.#checkOpen(what);
    try {
      return (await this.#pool.query(sql, params)).rows;
    } catch (error) {
      throw postgresStoreError(error, what, this.location);
    }
  }

  async #withClient<T>(what: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    this.#checkOpen(what);
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw postgresStoreError(error, what, this.location);
    }
    let broken = false;
    try {
      return await work(client);
    } catch (error) {
      broken = !(error instanceof pg.DatabaseError) && !(error instanceof WritError);
      throw postgresStoreError(error, what, this.location);
    } finally {
      client.release(broken);
    }
  }
}

function approvalOf(row: unknown): ApprovalRecord {
  const r = parseStored(approvalRowSchema, row, "an approval row");
  return approvalOfJson(r.record, r.seq);
}
