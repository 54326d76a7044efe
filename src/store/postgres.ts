/**
 * The `Store` for several Writ instances: PostgreSQL through a node-postgres pool. Everything that
 * must hold across instances is one atomic statement or one transaction in the database:
 *
 * - a grant use, an approval decision and an idempotency claim are each a single conditional
 *   statement (`INSERT … ON CONFLICT … DO UPDATE … WHERE`, `UPDATE … WHERE status = 'pending'`),
 *   so of any number of racing instances exactly one wins;
 * - the decision log is one global chain, appended under an advisory lock (postgres-append.ts);
 * - migrations run under a session advisory lock, one instance at a time.
 *
 * The SQL shared with SQLite is in each capability's module (resources.ts, decisions.ts, …,
 * assembled by sql-store.ts); this module keeps the pool, the migrations, the locking and what
 * PostgreSQL says differently (`postgresDialect`). It also holds
 * the grant signing key set (`grantKeySet`), which every instance on the database shares.
 */
import pg from "pg";
import { WritError } from "../core/errors.ts";
import type { KeySetStorage } from "../grants/key-storage.ts";
import { approvalCallKey, decidedFields } from "./approval-records.ts";
import { type ApprovalDecision, type ApprovalOpeningRequest, openApprovalQuery } from "./approvals.ts";
import { storeBackend } from "./backend.ts";
import type { DecisionLogEntry, NewDecisionEntry } from "./decision-entry.ts";
import type { Dialect } from "./dialect.ts";
import { consumeGrantSteps, type GrantConsumption, type GrantUse } from "./grant-uses.ts";
import { claimIdempotencySteps, type IdempotencyClaim, type IdempotencyRequest } from "./idempotency.ts";
import {
  checkCharges,
  type LimitCharge,
  type LimitConsumption,
  settleCharges,
  type UsageRow,
  usageRows,
} from "./limit-usage.ts";
import { headRows, PostgresAppender } from "./postgres-append.ts";
import { postgresStoreError, postgresUnique } from "./postgres-errors.ts";
import { PostgresKeySetStorage } from "./postgres-key-set.ts";
import { postgresMigrations } from "./postgres-migrations.ts";
import { appliedVersions, jsonText } from "./rows.ts";
import { raw, type Sql, sql } from "./sql.ts";
import { runSteps } from "./sql-access.ts";
import { SqlStore } from "./sql-store.ts";
import type { Store } from "./types.ts";

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
/** The class of the two-key advisory locks on an approval's call key (a key space of its own). */
const APPROVAL_CALL_LOCK = 728_364;

const INT8_OID = 20;

/**
 * BEGIN, a row for every bucket (so that each can be locked), and the rows locked in key order,
 * in one message: of several instances charging the same buckets, one at a time reads and writes
 * them. Keys are quoted with the client's own `escapeLiteral`.
 */
function lockBucketsText(client: pg.PoolClient, sortedKeys: readonly string[]): string {
  const keys = sortedKeys.map((key) => client.escapeLiteral(key));
  return [
    "BEGIN",
    `INSERT INTO limit_usage (key, level, at) VALUES ${keys.map((k) => `(${k}, 0, 0)`).join(", ")} ON CONFLICT DO NOTHING`,
    `SELECT key, level, at FROM limit_usage WHERE key IN (${keys.join(", ")}) ORDER BY key FOR UPDATE`,
  ].join("; ");
}

/** The charged levels written and the transaction committed, in one message. */
function writeBucketsText(client: pg.PoolClient, rows: readonly UsageRow[]): string {
  const values = rows.map((r) => `(${client.escapeLiteral(r.key)}, ${r.level}::float8, ${r.at}::bigint)`);
  return `UPDATE limit_usage AS u SET level = v.level, at = v.at FROM (VALUES ${values.join(", ")}) AS v(key, level, at)
    WHERE u.key = v.key; COMMIT`;
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

export const postgresDialect: Dialect = {
  placeholder: (index) => `$${index}`,
  bareColumnsOfMax: false,
  timestampColumn: "logged_at",
  entryPath: raw("(entry::jsonb ->> 'path')"),
  entryHasReason: (code) =>
    sql`EXISTS (SELECT 1 FROM jsonb_array_elements(decisions.entry::jsonb -> 'reasons') AS r WHERE r ->> 'code' = ${code})`,
  entryInRun: (runId) =>
    sql`(decisions.entry::jsonb #>> '{input,context,run,id}' = ${runId} OR decisions.entry::jsonb #>> '{input,run,id}' = ${runId})`,
  approverRolesOverlap: (roles) => sql`approver_roles && ${roles}::text[]`,
  textArray: (values) => values,
  recordJson: (column) => column,
  uniqueViolation: (error) =>
    error instanceof WritError && postgresUnique(error.cause) ? error.cause : undefined,
};

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

export class PostgresStore extends SqlStore implements Store {
  /** The database URL with its password hidden. */
  readonly location: string;
  readonly #pool: pg.Pool;
  #closed = false;
  readonly #appender: PostgresAppender;

  /** Connects lazily; call `migrate()` before use, or use `PostgresStore.open`. */
  constructor(url: string, options: PostgresStoreOptions = {}) {
    super(postgresDialect, options.now);
    this.location = redactedUrl(url);
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
    this.#appender = new PostgresAppender((what, work) => this.#withClient(what, work));
  }

  /** Connects and applies the migrations. */
  static open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    return SqlStore.migrated(new PostgresStore(url, options));
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
        const applied = appliedVersions(
          (await client.query("SELECT version FROM schema_migrations")).rows,
          postgresMigrations,
          this.location,
          "run a Writ release at least as new as the one that last migrated this database",
        );
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

  /** One conditional upsert; when it refuses, a second read says why. */
  async consumeGrant(use: GrantUse, now: Date = this.clock()): Promise<GrantConsumption> {
    return runSteps(this.db, "record a grant use", consumeGrantSteps(use, now));
  }

  /**
   * Appends several entries in one transaction, after the global head of the log
   * (postgres-append.ts: one round trip while this instance wrote the head, else under the lock).
   */
  async appendDecisions(entries: readonly NewDecisionEntry[]): Promise<DecisionLogEntry[]> {
    return this.#appender.append(entries);
  }

  /** One compare-and-swap statement: of any number of racing deciders, exactly one gets the row. */
  protected async decideApprovalRow({ id, expectedStatus, update, now }: ApprovalDecision): Promise<unknown> {
    const patch = jsonText(decidedFields(update), "/update");
    const [row] = await this.rows(
      "decide an approval",
      sql`UPDATE approvals SET status = ${update.status}, grant_jti = ${update.grant?.jti ?? null}, record = record || ${patch}::jsonb
       WHERE id = ${id} AND status = ${expectedStatus} AND (${update.status} = 'expired' OR expires_at > ${now.getTime()})
       RETURNING seq, record`,
    );
    return row;
  }

  /**
   * One transaction: a transaction-scoped advisory lock on the call's key (every instance asking
   * for the same call waits for it; others do not), the open request looked for, the new one
   * inserted when there is none, COMMIT.
   */
  protected async openOrInsertApproval({
    call,
    insert,
    now,
  }: ApprovalOpeningRequest): Promise<{ created: boolean; row: unknown }> {
    const open = openApprovalQuery(call, now.getTime()).render(postgresDialect.placeholder);
    const added = insert.render(postgresDialect.placeholder);
    return this.#withClient("open an approval request", async (client) => {
      let ended = false;
      try {
        await client.query("BEGIN");
        await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [
          APPROVAL_CALL_LOCK,
          approvalCallKey(call),
        ]);
        const [found] = (await client.query(open.text, [...open.values])).rows;
        const result =
          found !== undefined
            ? { created: false, row: found }
            : { created: true, row: (await client.query(added.text, [...added.values])).rows[0] };
        await client.query("COMMIT");
        ended = true;
        return result;
      } finally {
        if (!ended) await client.query("ROLLBACK").catch(() => {});
      }
    });
  }

  /** The claim and, when it lost, the winner's row, statement by statement (retried if released). */
  protected claimIdempotencyKey(request: IdempotencyRequest): Promise<IdempotencyClaim> {
    return runSteps(this.db, "claim an idempotency key", claimIdempotencySteps(request));
  }

  /**
   * One transaction, two round trips: the buckets' rows locked (created first when missing), then
   * the charge written and committed, or rolled back when any bucket is over.
   */
  async consumeLimits(charges: readonly LimitCharge[], now: Date = this.clock()): Promise<LimitConsumption> {
    checkCharges(charges);
    if (charges.length === 0) return { ok: true, used: [] };
    const keys = charges.map((c) => c.key).sort();
    return this.#withClient("charge limits", async (client) => {
      let ended = false;
      try {
        const rows = usageRows(headRows(await client.query(lockBucketsText(client, keys))));
        const { consumption, writes } = settleCharges(charges, rows, now.getTime());
        await client.query(writes.length > 0 ? writeBucketsText(client, writes) : "ROLLBACK");
        ended = true;
        return consumption;
      } finally {
        if (!ended) await client.query("ROLLBACK").catch(() => {});
      }
    });
  }

  // ------------------------------------------------------------------------------ helpers

  protected async rows(what: string, query: Sql): Promise<unknown[]> {
    return (await this.#query(what, query)).rows;
  }

  protected async execute(what: string, query: Sql): Promise<number> {
    return (await this.#query(what, query)).rowCount ?? 0;
  }

  async #query(what: string, query: Sql): Promise<pg.QueryResult> {
    this.#checkOpen(what);
    const { text, values } = query.render(postgresDialect.placeholder);
    try {
      return await this.#pool.query(text, [...values]);
    } catch (error) {
      throw postgresStoreError(error, what, this.location);
    }
  }

  #checkOpen(what: string): void {
    if (this.#closed) {
      throw new WritError("internal", `cannot ${what}: the store at ${this.location} is closed`, {
        suggestedFix: "open a new store (PostgresStore.open) instead of reusing a closed one",
      });
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

/** The `postgres` store section's backend: a pool of the configured size, migrated when opened. */
export const postgresBackend = storeBackend("postgres", (settings) =>
  PostgresStore.open(settings.url, { maxConnections: settings.max_connections }),
);
