/**
 * The buckets of limits (`limit_usage`, SQLite migration 13, PostgreSQL migration 14), shared by
 * both stores: one row per bucket key holding how much was used (`level`) as of a time (`at`,
 * milliseconds since the Unix epoch). A bucket drains continuously at its limit's rate, so what
 * is used now is `max(0, level - rate × elapsed)`; a step budget never drains. An instance whose
 * clock is behind the row's `at` drains nothing (it never frees room another instance took).
 *
 * Storing what was used (not what is left) keeps a bucket meaningful when its limit's size
 * changes in the configuration. A charge of several buckets is all or nothing: each store reads
 * the rows under its write lock (SQLite) or row locks (PostgreSQL), settles them here, and writes
 * them only when every bucket has room.
 */
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import { parseStored } from "./rows.ts";
import { join, type Sql, sql } from "./sql.ts";
import type { SqlAccess } from "./sql-access.ts";

/** One bucket a call is charged to. */
export interface LimitCharge {
  /** The bucket: the limit's name and the values it is counted per. */
  key: string;
  /** What the call costs: 1 for calls and steps, the value for a value budget. */
  cost: number;
  /** The most the bucket holds. */
  capacity: number;
  /** How much drains per second (0: never, a step budget). */
  drainPerSecond: number;
}

/** A bucket to read: its key and how fast it drains. */
export type LimitBucket = Pick<LimitCharge, "key" | "drainPerSecond">;

/**
 * A charge: taken (`used` after it, per charge) or refused, nothing written (`used` as it is,
 * per charge; `over` the indexes of the buckets without room).
 */
export type LimitConsumption = { ok: true; used: number[] } | { ok: false; used: number[]; over: number[] };

export interface LimitStore {
  /**
   * What is used of each bucket at `now` (0 for a bucket never charged), in the order given: the
   * usage the policy sees before it decides (src/limits/).
   */
  limitUsage(buckets: readonly LimitBucket[], now?: Date): Promise<number[]>;
  /**
   * Charges every bucket at once, atomically across instances: when each has room for its cost
   * at `now`, all are charged; otherwise none is (nothing written) and the answer says which
   * were over.
   */
  consumeLimits(charges: readonly LimitCharge[], now?: Date): Promise<LimitConsumption>;
}

/** A bucket's row: what was used, as of when. */
export interface UsageRow {
  key: string;
  level: number;
  at: number;
}

const usageRowSchema = z.object({ key: z.string(), level: z.number(), at: z.number().int() });

export function usageRows(rows: readonly unknown[]): Map<string, UsageRow> {
  const byKey = new Map<string, UsageRow>();
  for (const row of rows) {
    const r = parseStored(usageRowSchema, row, "a limit usage row");
    byKey.set(r.key, r);
  }
  return byKey;
}

/** What is used of a bucket at `now` (its row drained since it was written). */
export function usedNow(row: UsageRow | undefined, drainPerSecond: number, now: number): number {
  if (row === undefined) return 0;
  return Math.max(0, row.level - (drainPerSecond * Math.max(0, now - row.at)) / 1000);
}

/** Refuses charges no bucket could hold: a key, a cost and a size that are not what a limit makes. */
export function checkCharges(charges: readonly LimitCharge[]): void {
  const keys = new Set<string>();
  for (const c of charges) {
    const fine =
      c.key.length > 0 &&
      !keys.has(c.key) &&
      Number.isFinite(c.cost) &&
      c.cost >= 0 &&
      Number.isFinite(c.capacity) &&
      c.capacity > 0 &&
      Number.isFinite(c.drainPerSecond) &&
      c.drainPerSecond >= 0;
    if (!fine) {
      throw new WritError("invalid_argument", `a limit charge is malformed: ${JSON.stringify(c)}`, {
        suggestedFix: "charge each bucket once, with a finite non-negative cost and a positive capacity",
      });
    }
    keys.add(c.key);
  }
}

/**
 * Settles a charge against the rows as they are: refused (nothing to write) when any bucket
 * lacks room, else the rows to write, each bucket's level as of `now` plus its cost.
 */
export function settleCharges(
  charges: readonly LimitCharge[],
  rows: ReadonlyMap<string, UsageRow>,
  now: number,
): { consumption: LimitConsumption; writes: UsageRow[] } {
  const used = charges.map((c) => usedNow(rows.get(c.key), c.drainPerSecond, now));
  const over = charges.flatMap((c, i) => ((used[i] ?? 0) + c.cost > c.capacity ? [i] : []));
  if (over.length > 0) return { consumption: { ok: false, used, over }, writes: [] };
  const after = charges.map((c, i) => (used[i] ?? 0) + c.cost);
  return {
    consumption: { ok: true, used: after },
    // As of the later of now and the row's time: a clock behind never moves a bucket back.
    writes: charges.map((c, i) => ({
      key: c.key,
      level: after[i] ?? 0,
      at: Math.max(now, rows.get(c.key)?.at ?? now),
    })),
  };
}

/** The rows of `keys` (sorted, so that row locks are always taken in one order). */
export function usageQuery(keys: readonly string[]): Sql {
  return sql`SELECT key, level, at FROM limit_usage WHERE key IN (${join(
    keys.map((key) => sql`${key}`),
    ", ",
  )}) ORDER BY key`;
}

/** Writes one bucket's level as of `at`. */
export function writeUsageQuery(row: UsageRow): Sql {
  return sql`INSERT INTO limit_usage (key, level, at) VALUES (${row.key}, ${row.level}, ${row.at})
       ON CONFLICT (key) DO UPDATE SET level = excluded.level, at = excluded.at`;
}

/** What both dialects share of limits: reading usage (each charges under its own locks). */
export class SqlLimits implements Omit<LimitStore, "consumeLimits"> {
  constructor(private readonly db: SqlAccess) {}

  async limitUsage(buckets: readonly LimitBucket[], now: Date = this.db.clock()): Promise<number[]> {
    if (buckets.length === 0) return [];
    const rows = usageRows(await this.db.rows("read limit usage", usageQuery(buckets.map((b) => b.key))));
    return buckets.map((b) => usedNow(rows.get(b.key), b.drainPerSecond, now.getTime()));
  }
}
