/**
 * History facts read from memory on SQLite (issue 33), coherent with the file: the buckets a
 * store read stay in memory, with what its own appends add (the writer reports the rows it
 * wrote), while no other writer wrote history buckets since.
 *
 * Every transaction that writes buckets also takes a new version in `history_writers` (one more
 * than every writer's: store/history.ts `writeHistory`), the row of its writer (a random id per
 * open store). Each read first reads the versions (one small row set, not the buckets): when
 * another writer's highest version moved (another process, or another store on the file), the
 * memory is dropped; when this store's own version is ahead of what its appends reported (a
 * commit whose answer is on its way), or a bucket is not in memory, the buckets are read from
 * the file with the versions, in one read transaction. So a read never misses an entry another
 * writer committed before it, as a read of the file would not. The versions are read again only
 * when `PRAGMA data_version` moved since they were (it moves when another connection committed,
 * this store's writer thread's included, never for the connection's own commits: with an inline
 * writer they are read each time), so a read from memory costs that pragma, a read transaction
 * that reads no table. PostgreSQL reads the buckets each time (store/history.ts).
 */
import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import { z } from "zod";
import type { HistoryBucket, HistoryQuery, HistoryRow, HistoryWrite } from "./history.ts";
import { parseStored } from "./rows.ts";
import { join, sql } from "./sql.ts";
import type { SqliteConnection } from "./sqlite-connection.ts";

/** How many facts' keys are kept (the oldest read is forgotten first). */
const MAX_KEYS = 10_000;

interface Bucket {
  count: number;
  total: number;
  last_at: number;
  last_decision: string;
}

/** One fact's key in memory: its buckets from `since` on, as of this store's version `own`. */
interface Kept {
  since: number;
  own: number;
  buckets: Map<number, Bucket>;
}

const versionsSchema = z.object({ own: z.number().int(), other: z.number().int() });
type Versions = z.infer<typeof versionsSchema>;

const bucketRowSchema = z.object({
  fact: z.string(),
  key_hash: z.string(),
  bucket: z.number().int(),
  count: z.number().int().nonnegative(),
  total: z.number(),
  last_at: z.number().int(),
  last_decision: z.string(),
});

export class SqliteHistory {
  /** This store's id in `history_writers`, which its appends write with their buckets. */
  readonly writer = randomUUID();
  readonly #conn: SqliteConnection;
  readonly #kept = new Map<string, Kept>();
  /** The highest version of the other writers that the buckets in memory reflect. */
  #other: number | undefined;
  /** The highest own version whose rows were added to the buckets in memory. */
  #ownAdded = 0;
  /** `PRAGMA data_version` of the connection: it moves when another connection committed. */
  readonly #dataVersion: Database.Statement<[], unknown>;
  readonly #writerThread: boolean;
  /** The versions, in a read transaction of their own (with the data version they were read at). */
  readonly #readVersions: () => Versions;
  /** The versions last read, and the data version they were read at (in one read transaction). */
  #seen: { versions: Versions; dataVersion: unknown } | undefined;

  /**
   * `writerThread`: this store's writes commit on another connection (its writer thread's), so
   * that `PRAGMA data_version` moves for them too; else (inline) the versions are read each time.
   */
  constructor(conn: SqliteConnection, writerThread: boolean) {
    this.#conn = conn;
    this.#writerThread = writerThread;
    this.#dataVersion = conn.db.prepare("PRAGMA data_version").pluck();
    this.#readVersions = conn.db.transaction(() => this.#versions());
  }

  /** Each query's buckets summed (none for a key nothing counted in the window). */
  read(queries: readonly HistoryQuery[]): HistoryBucket[] {
    if (queries.length === 0) return [];
    const versions = this.#currentVersions();
    if (versions.other !== this.#other) this.#forget(versions.other);
    const kept = queries.map((q) => {
      const k = this.#kept.get(keyOf(q));
      const current =
        k !== undefined && k.since <= q.since && Math.max(k.own, this.#ownAdded) >= versions.own;
      return current ? k : undefined;
    });
    if (kept.every((k) => k !== undefined)) return queries.flatMap((q, i) => summed(q, kept[i]));
    return this.#readFile(queries);
  }

  /** Adds what this store's append wrote (in the order they were committed). */
  written(write: HistoryWrite | undefined): void {
    if (write === undefined) return;
    for (const row of write.rows) {
      const k = this.#kept.get(`${row.fact}\n${row.key}`);
      if (k === undefined || k.own >= write.version) continue;
      add(k.buckets, row.bucket, row);
    }
    this.#ownAdded = Math.max(this.#ownAdded, write.version);
  }

  /** The buckets of `queries` and the versions, read from the file in one read transaction. */
  #readFile(queries: readonly HistoryQuery[]): HistoryBucket[] {
    const { versions, rows } = this.#conn.db.transaction(() => ({
      versions: this.#versions(),
      rows: this.#conn.all(
        join(
          queries.map(
            (
              q,
            ) => sql`SELECT fact, key_hash, bucket, count, total, last_at, last_decision FROM history_buckets
              WHERE fact = ${q.fact} AND key_hash = ${q.key} AND bucket >= ${q.since}`,
          ),
          " UNION ALL ",
        ),
      ),
    }))();
    if (versions.other !== this.#other) this.#forget(versions.other);
    const fresh = new Map<string, Kept>();
    for (const q of queries) fresh.set(keyOf(q), { since: q.since, own: versions.own, buckets: new Map() });
    for (const row of rows) {
      const r = parseStored(bucketRowSchema, row, "a history bucket row");
      const k = fresh.get(`${r.fact}\n${r.key_hash}`);
      if (k !== undefined) add(k.buckets, r.bucket, r);
    }
    for (const [id, k] of fresh) {
      this.#kept.delete(id);
      this.#kept.set(id, k);
    }
    for (const id of this.#kept.keys()) {
      if (this.#kept.size <= MAX_KEYS) break;
      this.#kept.delete(id);
    }
    return queries.flatMap((q) => summed(q, fresh.get(keyOf(q))));
  }

  /**
   * The versions now: those last read while `PRAGMA data_version` has not moved since (no other
   * connection, this store's writer thread included, committed: the versions are the same), else
   * read again with it in one read transaction.
   */
  #currentVersions(): Versions {
    if (!this.#writerThread) return this.#versions();
    const seen = this.#seen;
    if (seen !== undefined && this.#dataVersion.get() === seen.dataVersion) return seen.versions;
    return this.#readVersions();
  }

  /** This store's version and the highest of the other writers' (0: none), remembered with the data version. */
  #versions(): Versions {
    // The buckets' table is named so that the statement fails when it cannot be read.
    const [row] = this.#conn.all(
      sql`SELECT (SELECT COALESCE(MAX(version), 0) FROM history_writers WHERE writer = ${this.writer}) AS own,
        (SELECT COALESCE(MAX(version), 0) FROM history_writers WHERE writer <> ${this.writer}) AS other
        WHERE NOT EXISTS (SELECT 1 FROM history_buckets WHERE 0)`,
    );
    const versions = parseStored(versionsSchema, row, "the history writers' versions");
    this.#seen = { versions, dataVersion: this.#dataVersion.get() };
    return versions;
  }

  #forget(other: number): void {
    this.#kept.clear();
    this.#other = other;
  }
}

function keyOf(q: HistoryQuery): string {
  return `${q.fact}\n${q.key}`;
}

function add(buckets: Map<number, Bucket>, at: number, row: Bucket | HistoryRow): void {
  const bucket = buckets.get(at);
  if (bucket === undefined) {
    buckets.set(at, {
      count: row.count,
      total: row.total,
      last_at: row.last_at,
      last_decision: row.last_decision,
    });
    return;
  }
  bucket.count += row.count;
  bucket.total += row.total;
  if (row.last_at >= bucket.last_at) {
    bucket.last_at = row.last_at;
    bucket.last_decision = row.last_decision;
  }
}

/** The key's buckets from the query's start on, summed (none when there are none); older ones are forgotten. */
function summed(q: HistoryQuery, kept: Kept | undefined): HistoryBucket[] {
  if (kept === undefined) return [];
  kept.since = q.since;
  let count = 0;
  let total = 0;
  let last: Bucket | undefined;
  for (const [at, bucket] of kept.buckets) {
    if (at < q.since) {
      kept.buckets.delete(at);
      continue;
    }
    count += bucket.count;
    total += bucket.total;
    if (last === undefined || bucket.last_at > last.last_at) last = bucket;
  }
  if (last === undefined) return [];
  return [
    { fact: q.fact, key: q.key, count, total, last_at: last.last_at, last_decision: last.last_decision },
  ];
}
