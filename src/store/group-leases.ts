/**
 * Concurrency-group leases (`group_leases`, SQLite migration 12, PostgreSQL migration 13):
 * `GroupLeaseStore` and its SQL (`SqlGroupLeases`), shared by both dialects. Per group (a
 * contract's `concurrency_group`), the one holder whose committing call runs now, until
 * `lease_until`.
 *
 * Each statement is one atomic row change, so instances sharing a SQLite file or a PostgreSQL
 * database agree on the holder: a claim takes the lease only when there is none, it expired, or
 * it is already the claimer's (a renewal); a release removes only the releaser's own lease.
 */
import { WritError } from "../core/errors.ts";
import { type Sql, sql } from "./sql.ts";
import type { SqlAccess } from "./sql-access.ts";

export interface GroupLeaseStore {
  /**
   * Takes or renews the lease of concurrency group `group` for `holder` (until `leaseUntil`)
   * unless another holder's lease still runs at `now`: whether `holder` has it now. Committing
   * calls of one group run only while their instance holds its lease (src/schedule/groups.ts).
   */
  claimGroupLease(group: string, holder: string, leaseUntil: Date, now?: Date): Promise<boolean>;
  /** Gives the lease up when `holder` has it (its call ended): the next claim gets it at once. */
  releaseGroupLease(group: string, holder: string): Promise<void>;
}

function checkName(what: string, value: string): void {
  if (value.length === 0) {
    throw new WritError("invalid_argument", `the ${what} of a concurrency-group lease is empty`, {
      suggestedFix: `pass a non-empty ${what}`,
    });
  }
}

/** Takes (or renews) the lease on `group` unless another holder's lease runs at `now`. */
function claimGroupLeaseQuery(group: string, holder: string, leaseUntil: Date, now: Date): Sql {
  checkName("group", group);
  checkName("holder", holder);
  return sql`INSERT INTO group_leases (grp, holder, lease_until)
       VALUES (${group}, ${holder}, ${leaseUntil.getTime()})
       ON CONFLICT (grp) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
         WHERE group_leases.holder = excluded.holder OR group_leases.lease_until <= ${now.getTime()}
       RETURNING holder`;
}

/** Ends `holder`'s lease on `group`, if it still has it: the next claim gets it at once. */
function releaseGroupLeaseQuery(group: string, holder: string): Sql {
  return sql`DELETE FROM group_leases WHERE grp = ${group} AND holder = ${holder}`;
}

export class SqlGroupLeases implements GroupLeaseStore {
  constructor(private readonly db: SqlAccess) {}

  async claimGroupLease(
    group: string,
    holder: string,
    leaseUntil: Date,
    now: Date = this.db.clock(),
  ): Promise<boolean> {
    const rows = await this.db.rows(
      "claim a concurrency group's lease",
      claimGroupLeaseQuery(group, holder, leaseUntil, now),
    );
    return rows.length === 1;
  }

  async releaseGroupLease(group: string, holder: string): Promise<void> {
    await this.db.execute("release a concurrency group's lease", releaseGroupLeaseQuery(group, holder));
  }
}
