/**
 * The statements of concurrency-group leases (`group_leases`, SQLite migration 12, PostgreSQL
 * migration 13), shared by both stores through sql-store.ts: per group (a contract's
 * `concurrency_group`), the one holder whose committing call runs now, until `lease_until`.
 *
 * Each statement is one atomic row change, so instances sharing a SQLite file or a PostgreSQL
 * database agree on the holder: a claim takes the lease only when there is none, it expired, or
 * it is already the claimer's (a renewal); a release removes only the releaser's own lease.
 */
import { WritError } from "../core/errors.ts";
import { type Sql, sql } from "./sql.ts";

function checkName(what: string, value: string): void {
  if (value.length === 0) {
    throw new WritError("invalid_argument", `the ${what} of a concurrency-group lease is empty`, {
      suggestedFix: `pass a non-empty ${what}`,
    });
  }
}

/** Takes (or renews) the lease on `group` unless another holder's lease runs at `now`. */
export function claimGroupLeaseQuery(group: string, holder: string, leaseUntil: Date, now: Date): Sql {
  checkName("group", group);
  checkName("holder", holder);
  return sql`INSERT INTO group_leases (grp, holder, lease_until)
       VALUES (${group}, ${holder}, ${leaseUntil.getTime()})
       ON CONFLICT (grp) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
         WHERE group_leases.holder = excluded.holder OR group_leases.lease_until <= ${now.getTime()}
       RETURNING holder`;
}

/** Ends `holder`'s lease on `group`, if it still has it: the next claim gets it at once. */
export function releaseGroupLeaseQuery(group: string, holder: string): Sql {
  return sql`DELETE FROM group_leases WHERE grp = ${group} AND holder = ${holder}`;
}
