/**
 * Idempotency keys (`idempotency`): the first request with a key claims it, later ones get its
 * claim (pending, or done with the stored outcome). `IdempotencyStore` is what claims them; the
 * claim is written once here (`claimIdempotencySteps`) and run by each dialect under its own
 * locking.
 */
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import { jsonText, parseStored } from "./rows.ts";
import { sql } from "./sql.ts";
import type { SqlAccess, SqlSteps } from "./sql-access.ts";

/** The result of claiming an idempotency key (first request wins). */
export type IdempotencyClaim =
  | { state: "claimed" }
  | { state: "pending"; request_digest: string }
  | { state: "done"; request_digest: string; outcome: unknown };

export interface IdempotencyStore {
  /**
   * Atomically claims `key` for `subject`: `claimed` when no live claim existed (this request
   * must execute and then `completeIdempotency` or `releaseIdempotency`), otherwise the existing
   * claim (`pending` while its request runs, `done` with the stored outcome). Expired claims are
   * replaced.
   */
  claimIdempotency(
    subject: string,
    key: string,
    requestDigest: string,
    expiresAt: Date,
    now?: Date,
  ): Promise<IdempotencyClaim>;
  /** Stores the outcome of a claimed key (state `done`). */
  completeIdempotency(subject: string, key: string, outcome: unknown): Promise<void>;
  /** Drops a pending claim (the request failed without an outcome worth replaying). */
  releaseIdempotency(subject: string, key: string): Promise<void>;
}

/** What `claimIdempotency` takes after the key's subject and name. */
export interface IdempotencyRequest {
  subject: string;
  key: string;
  requestDigest: string;
  expiresAt: Date;
  now: Date;
}

const idempotencyRowSchema = z.object({
  request_digest: z.string(),
  state: z.enum(["pending", "done"]),
  outcome: z.string().nullable(),
  expires_at: z.number().int(),
});

/**
 * The claim is one statement; when it loses, the winner's row is read. Should the winner release
 * its claim in between (only possible across PostgreSQL instances; SQLite holds its write lock),
 * the claim is tried again.
 */
export function* claimIdempotencySteps(request: IdempotencyRequest): SqlSteps<IdempotencyClaim> {
  const { subject, key, requestDigest, expiresAt, now } = request;
  for (let attempt = 0; attempt < 5; attempt++) {
    const claimed =
      yield sql`INSERT INTO idempotency (subject, key, request_digest, state, outcome, created_at, expires_at)
       VALUES (${subject}, ${key}, ${requestDigest}, 'pending', NULL, ${now.getTime()}, ${expiresAt.getTime()})
       ON CONFLICT (subject, key) DO UPDATE SET request_digest = excluded.request_digest,
         state = 'pending', outcome = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
         WHERE idempotency.expires_at <= ${now.getTime()}
       RETURNING 1`;
    if (claimed.length > 0) return { state: "claimed" };
    const [row] =
      yield sql`SELECT request_digest, state, outcome, expires_at FROM idempotency WHERE subject = ${subject} AND key = ${key}`;
    if (row !== undefined) return heldClaim(row);
  }
  throw new WritError("backend_unavailable", `idempotency key ${key} kept changing while it was claimed`, {
    retryable: true,
    suggestedFix: "retry the request with the same Idempotency-Key",
  });
}

/** The claim another request holds, from its row. */
function heldClaim(row: unknown): IdempotencyClaim {
  const held = parseStored(idempotencyRowSchema, row, "an idempotency key");
  if (held.state === "pending") return { state: "pending", request_digest: held.request_digest };
  return {
    state: "done",
    request_digest: held.request_digest,
    outcome: held.outcome === null ? null : JSON.parse(held.outcome),
  };
}

/** A dialect's run of {@link claimIdempotencySteps} under its own locking. */
export type ClaimIdempotency = (request: IdempotencyRequest) => Promise<IdempotencyClaim>;

/** Idempotency keys in both dialects, over the dialect's claim. */
export class SqlIdempotency implements IdempotencyStore {
  constructor(
    private readonly db: SqlAccess,
    private readonly claim: ClaimIdempotency,
  ) {}

  claimIdempotency(
    subject: string,
    key: string,
    requestDigest: string,
    expiresAt: Date,
    now: Date = this.db.clock(),
  ): Promise<IdempotencyClaim> {
    return this.claim({ subject, key, requestDigest, expiresAt, now });
  }

  async completeIdempotency(subject: string, key: string, outcome: unknown): Promise<void> {
    const text = jsonText(outcome, "/outcome");
    await this.db.execute(
      "store an idempotent outcome",
      sql`UPDATE idempotency SET state = 'done', outcome = ${text} WHERE subject = ${subject} AND key = ${key}`,
    );
  }

  async releaseIdempotency(subject: string, key: string): Promise<void> {
    await this.db.execute(
      "release an idempotency key",
      sql`DELETE FROM idempotency WHERE subject = ${subject} AND key = ${key} AND state = 'pending'`,
    );
  }
}
