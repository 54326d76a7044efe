/**
 * History facts' buckets (`history_buckets`, SQLite migration 14, PostgreSQL migration 15): what
 * the configured facts (src/history/) count, maintained as entries are appended, in the same
 * transaction as the entry that counts (so a fact never counts what is not on the log, and a
 * restart loses nothing). One row per (fact, key, time bucket): how many entries counted, the
 * sum of their amounts, and the latest one (its time and decision id). A read is the buckets of
 * a window (at most about 60 rows a fact), whatever the log's size.
 *
 * The decision log hands each entry's counts (`NewDecisionEntry.history`) to the store's append;
 * the bucket is the entry's own timestamp rounded down to the fact's bucket size.
 */
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import { parseStored } from "./rows.ts";
import { join, raw, type Sql, sql } from "./sql.ts";
import type { SqlAccess } from "./sql-access.ts";

/** One fact an appended entry counts in (computed by src/history/ from the call). */
export interface HistoryCount {
  /** The fact's stored id: its name and a digest of its definition. */
  fact: string;
  /** The digest of the values the fact is counted per (within the entry's tenant). */
  key: string;
  /** The fact's bucket size and window, in seconds (a bucket is kept until it left the window). */
  bucket_s: number;
  window_s: number;
  /** What the entry adds to the fact's sum (0 when the fact has no sum). */
  amount: number;
}

/** A fact's buckets to read: those starting at or after `since` (milliseconds since the Unix epoch). */
export interface HistoryQuery {
  fact: string;
  key: string;
  since: number;
}

/** A fact's buckets of a window as read: summed, with the latest entry. */
export interface HistoryBucket {
  fact: string;
  key: string;
  count: number;
  total: number;
  last_at: number;
  last_decision: string;
}

export interface HistoryStore {
  /** Each query's buckets summed (any order; none for a fact nothing counted yet in the window). */
  historyBuckets(queries: readonly HistoryQuery[]): Promise<HistoryBucket[]>;
  /** Deletes the buckets that left every window by `now`; how many. */
  pruneHistory(now?: Date): Promise<number>;
}

/** A bucket's row as written: one entry's counts, or several of one bucket summed. */
export interface HistoryRow {
  fact: string;
  key: string;
  bucket: number;
  count: number;
  total: number;
  last_at: number;
  last_decision: string;
  expires_at: number;
}

/** Refuses counts no fact makes (they cross a thread boundary and come from configuration). */
export function checkCounts(counts: readonly HistoryCount[]): void {
  for (const c of counts) {
    const fine =
      c.fact.length > 0 &&
      c.key.length > 0 &&
      Number.isSafeInteger(c.bucket_s) &&
      c.bucket_s > 0 &&
      Number.isSafeInteger(c.window_s) &&
      c.window_s > 0 &&
      Number.isFinite(c.amount);
    if (!fine) {
      throw new WritError("invalid_argument", `a history count is malformed: ${JSON.stringify(c)}`, {
        suggestedFix: "count entries through the configured history facts (src/history/)",
      });
    }
  }
}

/**
 * The rows an entry's counts add, one per fact, in the bucket of the entry's time (`at`, ms);
 * summed per bucket when a batch counts one bucket several times (one row per bucket).
 */
export function historyRows(
  entries: readonly { counts: readonly HistoryCount[] | undefined; at: number; decisionId: string }[],
): HistoryRow[] {
  const rows = new Map<string, HistoryRow>();
  for (const { counts, at, decisionId } of entries) {
    if (counts === undefined) continue;
    checkCounts(counts);
    for (const c of counts) {
      const size = c.bucket_s * 1000;
      const bucket = Math.floor(at / size) * size;
      const id = `${c.fact}\n${c.key}\n${bucket}`;
      const row = rows.get(id);
      const expires = bucket + size + c.window_s * 1000;
      if (row === undefined) {
        rows.set(id, {
          fact: c.fact,
          key: c.key,
          bucket,
          count: 1,
          total: c.amount,
          last_at: at,
          last_decision: decisionId,
          expires_at: expires,
        });
        continue;
      }
      row.count += 1;
      row.total += c.amount;
      if (at >= row.last_at) {
        row.last_at = at;
        row.last_decision = decisionId;
      }
      row.expires_at = Math.max(row.expires_at, expires);
    }
  }
  return [...rows.values()];
}

/**
 * The upsert of several bucket rows (distinct buckets) in one statement: its text depends only on
 * how many rows it has (at most UPSERT_ROWS, so that a few statements are prepared, not one per
 * batch size).
 */
function upsertHistoryQuery(rows: readonly HistoryRow[]): Sql {
  const values = rows.map(
    (r) =>
      sql`(${r.fact}, ${r.key}, ${r.bucket}, ${r.count}, ${r.total}, ${r.last_at}, ${r.last_decision}, ${r.expires_at})`,
  );
  return sql`INSERT INTO history_buckets (fact, key_hash, bucket, count, total, last_at, last_decision, expires_at)
    VALUES ${join(values, ", ")} ON CONFLICT (fact, key_hash, bucket) DO UPDATE SET ${raw(UPSERT_SET)}`;
}

/** The most rows one upsert writes. */
const UPSERT_ROWS = 16;

/** What an upsert sets on a bucket already there (both dialects read the old row as the table's name). */
export const UPSERT_SET = `count = history_buckets.count + excluded.count,
      total = history_buckets.total + excluded.total,
      last_decision = CASE WHEN excluded.last_at >= history_buckets.last_at THEN excluded.last_decision ELSE history_buckets.last_decision END,
      last_at = CASE WHEN excluded.last_at >= history_buckets.last_at THEN excluded.last_at ELSE history_buckets.last_at END,
      expires_at = CASE WHEN excluded.expires_at > history_buckets.expires_at THEN excluded.expires_at ELSE history_buckets.expires_at END`;

const bucketRowSchema = z.object({
  fact: z.string(),
  key_hash: z.string(),
  count: z.number().int().nonnegative(),
  total: z.number(),
  last_at: z.number().int(),
  last_decision: z.string(),
});

export class SqlHistory implements HistoryStore {
  constructor(private readonly db: SqlAccess) {}

  /**
   * One row per fact and key: the buckets summed in SQL (reading at most a window of buckets per
   * fact, by the primary key), with the latest bucket's last entry (the latest of them all).
   */
  async historyBuckets(queries: readonly HistoryQuery[]): Promise<HistoryBucket[]> {
    if (queries.length === 0) return [];
    const rows = await this.db.rows(
      "read history facts",
      this.db.dialect.bareColumnsOfMax
        ? // One range of the primary key per fact, its latest bucket's last entry as bare columns
          // (a quarter of the OR'd query's time on SQLite: no temporary B-tree, no join).
          join(
            queries.map(
              (
                q,
              ) => sql`SELECT fact, key_hash, SUM(count) AS count, SUM(total) AS total, MAX(bucket) AS bucket,
                last_at, last_decision FROM history_buckets
                WHERE fact = ${q.fact} AND key_hash = ${q.key} AND bucket >= ${q.since} GROUP BY fact, key_hash`,
            ),
            " UNION ALL ",
          )
        : sql`SELECT a.fact, a.key_hash, a.count, a.total, b.last_at, b.last_decision FROM (
          SELECT fact, key_hash, CAST(SUM(count) AS BIGINT) AS count, SUM(total) AS total, MAX(bucket) AS bucket
          FROM history_buckets WHERE ${join(
            queries.map((q) => sql`(fact = ${q.fact} AND key_hash = ${q.key} AND bucket >= ${q.since})`),
            " OR ",
          )} GROUP BY fact, key_hash
        ) AS a JOIN history_buckets AS b ON b.fact = a.fact AND b.key_hash = a.key_hash AND b.bucket = a.bucket`,
    );
    return rows.map((row) => {
      const r = parseStored(bucketRowSchema, row, "a history facts row");
      return {
        fact: r.fact,
        key: r.key_hash,
        count: r.count,
        total: r.total,
        last_at: r.last_at,
        last_decision: r.last_decision,
      };
    });
  }

  async pruneHistory(now: Date = this.db.clock()): Promise<number> {
    return this.db.execute(
      "prune history facts",
      sql`DELETE FROM history_buckets WHERE expires_at < ${now.getTime()}`,
    );
  }
}

/** What an append wrote to the history buckets (SQLite): the version its writer took, and the rows. */
export interface HistoryWrite {
  version: number;
  rows: HistoryRow[];
}

const versionRowSchema = z.object({ version: z.number().int().positive() });

/**
 * Writes what appended entries count with `db` (SQLite, inside the entries' transaction): one
 * upsert per bucket, however many of the entries count in it (`history[i]` is what `stored[i]`
 * counts in; several buckets in one statement), and the writer's new version (`history_writers`: one more than any writer's, so
 * that every other store sees that someone wrote). Undefined when nothing counts.
 */
export function writeHistory(
  db: { run(query: Sql): void; all(query: Sql): unknown[] },
  writer: string,
  history: readonly (readonly HistoryCount[] | undefined)[],
  stored: readonly { timestamp: string; decision_id: string }[],
): HistoryWrite | undefined {
  const rows = batchHistoryRows(history, stored);
  if (rows.length === 0) return undefined;
  for (let i = 0; i < rows.length; i += UPSERT_ROWS)
    db.run(upsertHistoryQuery(rows.slice(i, i + UPSERT_ROWS)));
  const [bumped] = db.all(
    sql`INSERT INTO history_writers (writer, version, updated_at)
      VALUES (${writer}, (SELECT COALESCE(MAX(version), 0) + 1 FROM history_writers), ${Date.now()})
      ON CONFLICT (writer) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at
      RETURNING version`,
  );
  return { version: parseStored(versionRowSchema, bumped, "a history writer's version").version, rows };
}

/** The rows a batch of appended entries adds (`history[i]` is what `stored[i]`, as chained, counts in). */
export function batchHistoryRows(
  history: readonly (readonly HistoryCount[] | undefined)[],
  stored: readonly { timestamp: string; decision_id: string }[],
): HistoryRow[] {
  if (!history.some((counts) => counts !== undefined && counts.length > 0)) return [];
  return historyRows(
    stored.map((entry, i) => ({
      counts: history[i],
      at: Date.parse(entry.timestamp),
      decisionId: entry.decision_id,
    })),
  );
}

/** One upsert of several rows (distinct buckets), its values quoted with `literal` (PostgreSQL's one-message append). */
export function upsertHistoryText(rows: readonly HistoryRow[], literal: (text: string) => string): string {
  const values = rows.map(
    (r) =>
      `(${literal(r.fact)}, ${literal(r.key)}, ${r.bucket}, ${r.count}, ${r.total}, ${r.last_at}, ${literal(r.last_decision)}, ${r.expires_at})`,
  );
  return `INSERT INTO history_buckets (fact, key_hash, bucket, count, total, last_at, last_decision, expires_at)
    VALUES ${values.join(", ")} ON CONFLICT (fact, key_hash, bucket) DO UPDATE SET ${UPSERT_SET}`;
}
