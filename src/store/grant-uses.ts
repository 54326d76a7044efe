/**
 * Grant uses (`grant_uses`): how often each grant was used, counted in one statement with the
 * check of the revision of the resource it is bound to. `GrantUseStore` is what counts them; the
 * count and its refusal are written once here (`consumeGrantSteps`) and run by each dialect under
 * its own locking.
 */
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import { parseStored, validDate } from "./rows.ts";
import { type Sql, sql } from "./sql.ts";
import type { SqlSteps } from "./sql-access.ts";

/** One use of a grant, as `Store.consumeGrant` records it. */
export interface GrantUse {
  jti: string;
  /** Uses allowed in all (the grant's `max`, or a `max_uses` condition's). */
  maxUses: number;
  /** When the grant expires: no use counts from then on. */
  expiresAt: Date;
  /**
   * The resource the grant is bound to and the revision its decision saw (`null`: the resource
   * did not exist then): the use counts only while the resource is still at that revision, read
   * in the same statement that counts it.
   */
  resource?: { type: string; id: string; revision: number | null };
}

export type GrantConsumption =
  | { ok: true; uses: number }
  | { ok: false; reason: "exhausted" | "expired" }
  /** The resource moved: `revision` is where it is now (`null`: it does not exist). */
  | { ok: false; reason: "stale_revision"; revision: number | null };

export interface GrantUseStore {
  /**
   * Records one use of a grant; refuses once `maxUses` uses were recorded, after `expiresAt`, or
   * (for a grant bound to a resource) once the resource moved from the revision it was decided
   * on: checked and counted atomically, so a grant is never spent on a resource that changed.
   */
  consumeGrant(use: GrantUse, now?: Date): Promise<GrantConsumption>;
}

const usesRowSchema = z.object({ uses: z.number().int().positive() });
const revisionRowSchema = z.object({ revision: z.number().int().positive() });
const grantRowSchema = z.object({
  uses: z.number().int(),
  max_uses: z.number().int(),
  expires_at: z.number().int(),
});

/**
 * A grant use: counted by one conditional statement; when it refuses, the grant's row and the
 * bound resource's revision are read to say why.
 */
export function* consumeGrantSteps(use: GrantUse, now: Date): SqlSteps<GrantConsumption> {
  checkGrantUse(use, now);
  if (now.getTime() >= use.expiresAt.getTime()) return { ok: false, reason: "expired" };
  const [used] = yield grantUseQuery(use, now);
  if (used !== undefined) return { ok: true, uses: parseStored(usesRowSchema, used, "a grant use").uses };
  const bound = use.resource;
  const [grantRow] = yield sql`SELECT uses, max_uses, expires_at FROM grant_uses WHERE jti = ${use.jti}`;
  const [revisionRow] =
    bound === undefined
      ? []
      : yield sql`SELECT revision FROM resources WHERE type = ${bound.type} AND id = ${bound.id}`;
  return grantRefusal(use, grantRow, revisionRow, now);
}

/** Deletes the use records of grants that expired at or before `now`. */
export function pruneGrantsQuery(now: Date): Sql {
  return sql`DELETE FROM grant_uses WHERE expires_at <= ${now.getTime()}`;
}

/**
 * One more use of a grant, unless it is used up or expired, or (when bound) its resource is no
 * longer at the revision the grant was decided on: returns `uses` when it counted. The binding is
 * a condition of the same statement, so the check and the count are one atomic step.
 */
function grantUseQuery(use: GrantUse, now: Date): Sql {
  const { jti, maxUses } = use;
  const expiresAt = use.expiresAt.getTime();
  const counted = sql`ON CONFLICT (jti) DO UPDATE SET uses = grant_uses.uses + 1
         WHERE grant_uses.uses < grant_uses.max_uses AND grant_uses.expires_at > ${now.getTime()}
           AND ${use.resource === undefined ? sql`1 = 1` : resourceAtRevision(use.resource)}
       RETURNING uses`;
  if (use.resource === undefined) {
    return sql`INSERT INTO grant_uses (jti, uses, max_uses, expires_at) VALUES (${jti}, 1, ${maxUses}, ${expiresAt})
       ${counted}`;
  }
  // INSERT … SELECT (typed: PostgreSQL infers no parameter type from a SELECT list) WHERE bound.
  return sql`INSERT INTO grant_uses (jti, uses, max_uses, expires_at)
       SELECT CAST(${jti} AS TEXT), 1, CAST(${maxUses} AS INTEGER), CAST(${expiresAt} AS BIGINT)
       WHERE ${resourceAtRevision(use.resource)}
       ${counted}`;
}

/** True while the resource is at `revision` (null: while it does not exist). */
function resourceAtRevision(r: NonNullable<GrantUse["resource"]>): Sql {
  return r.revision === null
    ? sql`NOT EXISTS (SELECT 1 FROM resources WHERE type = ${r.type} AND id = ${r.id})`
    : sql`EXISTS (SELECT 1 FROM resources WHERE type = ${r.type} AND id = ${r.id} AND revision = ${r.revision})`;
}

/**
 * Why a use was refused, from the grant's row (absent: never counted) and, for a bound use, the
 * resource's revision row (absent: no such resource), both read after the refusal. A grant used
 * up or expired says so first; a grant refused for neither was refused for its revision.
 */
function grantRefusal(
  use: GrantUse,
  grantRow: unknown,
  revisionRow: unknown,
  now: Date,
): Extract<GrantConsumption, { ok: false }> {
  if (grantRow !== undefined) {
    const stored = parseStored(grantRowSchema, grantRow, "a grant use");
    if (stored.expires_at <= now.getTime()) return { ok: false, reason: "expired" };
    if (stored.uses >= stored.max_uses || use.resource === undefined)
      return { ok: false, reason: "exhausted" };
  } else if (use.resource === undefined) {
    // Refused, yet no row: only an expired row is ever deleted.
    return { ok: false, reason: "expired" };
  }
  const revision =
    revisionRow === undefined
      ? null
      : parseStored(revisionRowSchema, revisionRow, "a resource revision").revision;
  return { ok: false, reason: "stale_revision", revision };
}

/** Refuses grant-use arguments that cannot be right. */
function checkGrantUse(use: GrantUse, now: Date): void {
  const { jti, maxUses, expiresAt, resource } = use;
  if (
    jti === "" ||
    !Number.isSafeInteger(maxUses) ||
    maxUses < 1 ||
    !validDate(expiresAt) ||
    !validDate(now) ||
    (resource !== undefined &&
      (resource.type === "" || (resource.revision !== null && !Number.isSafeInteger(resource.revision))))
  ) {
    throw new WritError(
      "invalid_argument",
      "consumeGrant needs a jti, a positive integer maxUses, valid dates and, when bound, a resource type and an integer (or null) revision",
      {
        suggestedFix:
          "pass the grant's jti, its max claim (at least 1), its exp as a Date and its res claim's type, id and revision",
      },
    );
  }
}
