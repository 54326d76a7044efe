/**
 * Decision-log shipping (`log_shipping`, SQLite migration 9, PostgreSQL migration 10):
 * `LogShippingStore` and its SQL (`SqlLogShipping`), shared by both dialects. Per destination,
 * the last seq it acknowledged and the lease of the one instance that ships to it.
 *
 * Every statement is one atomic row change, so SQLite (processes sharing a file) and PostgreSQL
 * (instances sharing a database) behave alike: a claim takes the lease only when it is free,
 * expired or already this holder's; an advance moves the cursor only while this holder still has
 * the lease (a holder whose lease was taken over cannot move a cursor it no longer owns).
 */
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import { parseStored } from "./rows.ts";
import { type Sql, sql } from "./sql.ts";
import type { SqlAccess } from "./sql-access.ts";

/** Where shipping the decision log to one destination got to (src/decisionlog/ship/). */
export interface LogShippingState {
  /** The last seq the destination acknowledged (0: none yet). */
  shipped_seq: number;
  /** The instance holding the lease to ship (null: released). */
  holder: string | null;
  lease_until: Date;
}

/** A claim of the shipping lease: held (by the claimer) or not, and the cursor as stored. */
export interface LogShippingClaim {
  held: boolean;
  shipped_seq: number;
}

export interface LogShippingStore {
  /**
   * Takes or renews the lease to ship the decision log to `target` (until `leaseUntil`) unless
   * another holder's lease still runs at `now`; answers whether this holder has it, and the
   * destination's cursor. A target never seen starts at 0.
   */
  claimLogShipping(target: string, holder: string, leaseUntil: Date, now?: Date): Promise<LogShippingClaim>;
  /**
   * Records that `target` acknowledged every entry up to `seq` (the cursor never moves back) and
   * renews the lease; false (nothing written) when `holder` no longer has the lease.
   */
  advanceLogShipping(target: string, holder: string, seq: number, leaseUntil: Date): Promise<boolean>;
  /** Gives the lease up, when `holder` has it (shutdown: another instance takes over at once). */
  releaseLogShipping(target: string, holder: string): Promise<void>;
  /** The destination's cursor and lease, or undefined when nothing was ever shipped to it. */
  logShipping(target: string): Promise<LogShippingState | undefined>;
}

const shippingRowSchema = z.object({
  shipped_seq: z.number().int().nonnegative(),
  holder: z.string().nullable(),
  lease_until: z.number().int(),
});

function shippingStateOf(row: unknown): LogShippingState {
  const r = parseStored(shippingRowSchema, row, "a log shipping row");
  return { shipped_seq: r.shipped_seq, holder: r.holder, lease_until: new Date(r.lease_until) };
}

function checkName(what: string, value: string): void {
  if (value.length === 0) {
    throw new WritError("invalid_argument", `the ${what} of decision-log shipping is empty`, {
      suggestedFix: `pass a non-empty ${what}`,
    });
  }
}

/** Takes (or renews) the lease on `target` unless another holder's lease is still running. */
function claimShippingQuery(target: string, holder: string, leaseUntil: Date, now: Date): Sql {
  checkName("target", target);
  checkName("holder", holder);
  return sql`INSERT INTO log_shipping (target, shipped_seq, holder, lease_until)
       VALUES (${target}, 0, ${holder}, ${leaseUntil.getTime()})
       ON CONFLICT (target) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
         WHERE log_shipping.holder IS NULL OR log_shipping.holder = excluded.holder
           OR log_shipping.lease_until <= ${now.getTime()}
       RETURNING shipped_seq, holder, lease_until`;
}

function shippingStateQuery(target: string): Sql {
  return sql`SELECT shipped_seq, holder, lease_until FROM log_shipping WHERE target = ${target}`;
}

/** Moves the cursor forward to `seq` (never back) and renews the lease, while `holder` has it. */
function advanceShippingQuery(target: string, holder: string, seq: number, leaseUntil: Date): Sql {
  if (!Number.isSafeInteger(seq) || seq < 0) {
    throw new WritError("invalid_argument", `a shipped seq must be a non-negative integer, not ${seq}`, {
      suggestedFix: "pass the seq of the last entry the destination acknowledged",
    });
  }
  return sql`UPDATE log_shipping
       SET shipped_seq = CASE WHEN shipped_seq < ${seq} THEN ${seq} ELSE shipped_seq END,
         lease_until = ${leaseUntil.getTime()}
       WHERE target = ${target} AND holder = ${holder}`;
}

/** Gives the lease up (on shutdown), so that another instance takes over at once. */
function releaseShippingQuery(target: string, holder: string): Sql {
  return sql`UPDATE log_shipping SET holder = NULL, lease_until = 0 WHERE target = ${target} AND holder = ${holder}`;
}

export class SqlLogShipping implements LogShippingStore {
  constructor(private readonly db: SqlAccess) {}

  async claimLogShipping(
    target: string,
    holder: string,
    leaseUntil: Date,
    now: Date = this.db.clock(),
  ): Promise<LogShippingClaim> {
    const what = "claim decision-log shipping";
    const [row] = await this.db.rows(what, claimShippingQuery(target, holder, leaseUntil, now));
    if (row !== undefined) return { held: true, shipped_seq: shippingStateOf(row).shipped_seq };
    const state = await this.logShipping(target);
    return { held: false, shipped_seq: state?.shipped_seq ?? 0 };
  }

  async advanceLogShipping(target: string, holder: string, seq: number, leaseUntil: Date): Promise<boolean> {
    const query = advanceShippingQuery(target, holder, seq, leaseUntil);
    return (await this.db.execute("record shipped decision-log entries", query)) === 1;
  }

  async releaseLogShipping(target: string, holder: string): Promise<void> {
    await this.db.execute("release decision-log shipping", releaseShippingQuery(target, holder));
  }

  async logShipping(target: string): Promise<LogShippingState | undefined> {
    const [row] = await this.db.rows("read decision-log shipping", shippingStateQuery(target));
    return row === undefined ? undefined : shippingStateOf(row);
  }
}
