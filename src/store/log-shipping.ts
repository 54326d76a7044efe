/**
 * The statements and row shape of decision-log shipping (`log_shipping`, SQLite migration 9,
 * PostgreSQL migration 10), shared by both stores through sql-store.ts: per destination, the last
 * seq it acknowledged and the lease of the one instance that ships to it.
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
import type { LogShippingState } from "./types.ts";

const shippingRowSchema = z.object({
  shipped_seq: z.number().int().nonnegative(),
  holder: z.string().nullable(),
  lease_until: z.number().int(),
});

export function shippingStateOf(row: unknown): LogShippingState {
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
export function claimShippingQuery(target: string, holder: string, leaseUntil: Date, now: Date): Sql {
  checkName("target", target);
  checkName("holder", holder);
  return sql`INSERT INTO log_shipping (target, shipped_seq, holder, lease_until)
       VALUES (${target}, 0, ${holder}, ${leaseUntil.getTime()})
       ON CONFLICT (target) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
         WHERE log_shipping.holder IS NULL OR log_shipping.holder = excluded.holder
           OR log_shipping.lease_until <= ${now.getTime()}
       RETURNING shipped_seq, holder, lease_until`;
}

export function shippingStateQuery(target: string): Sql {
  return sql`SELECT shipped_seq, holder, lease_until FROM log_shipping WHERE target = ${target}`;
}

/** Moves the cursor forward to `seq` (never back) and renews the lease, while `holder` has it. */
export function advanceShippingQuery(target: string, holder: string, seq: number, leaseUntil: Date): Sql {
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
export function releaseShippingQuery(target: string, holder: string): Sql {
  return sql`UPDATE log_shipping SET holder = NULL, lease_until = 0 WHERE target = ${target} AND holder = ${holder}`;
}
