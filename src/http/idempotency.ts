/**
 * `Idempotency-Key` (on `POST /v1/execute`, and on proposals that execute): a repeat of the same
 * request answers the stored outcome without running again. Keys belong to one subject and are
 * kept for a day.
 */
import { z } from "zod";
import { jsonDigest } from "../core/digest.ts";
import { WritError } from "../core/errors.ts";
import type { Subject } from "../core/types.ts";
import type { IdempotencyStore } from "../store/types.ts";
import { parseWith } from "./request.ts";

/** How long an idempotency key and its stored outcome are kept. */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

const idempotencyKeySchema = z.string().min(1).max(200);
const storedAnswerSchema = z.object({ status: z.number().int(), body: z.unknown() });

/** An answer as it is stored and replayed: the status and the JSON body. */
export interface StoredAnswer {
  status: number;
  body: unknown;
}

/** The checked `Idempotency-Key` header, or undefined when there is none. */
export function idempotencyKeyOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return parseWith(idempotencyKeySchema, header, "/headers/idempotency-key", "the Idempotency-Key header");
}

/**
 * Runs `work` at most once per (subject, key): the first request claims the key; a repeat with
 * the same request digest gets the stored answer; a different digest, or a repeat while the first
 * is still running, is `conflict`. A failure with no answer worth replaying releases the key.
 */
export async function idempotent(
  store: IdempotencyStore,
  subject: Subject,
  key: string,
  request: unknown,
  work: () => Promise<StoredAnswer>,
): Promise<StoredAnswer> {
  const owner = `${subject.tenant}/${subject.id}`;
  const digest = jsonDigest(request);
  const now = new Date();
  const claim = await store.claimIdempotency(
    owner,
    key,
    digest,
    new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
    now,
  );
  if (claim.state !== "claimed") {
    if (claim.request_digest !== digest) {
      throw new WritError("conflict", "this Idempotency-Key was already used for a different request", {
        retryable: false,
        suggestedFix: "use a new Idempotency-Key for a new request",
      });
    }
    if (claim.state === "pending") {
      throw new WritError("conflict", "a request with this Idempotency-Key is still running", {
        retryable: true,
        suggestedFix: "retry shortly: the stored outcome is returned once the first request finishes",
      });
    }
    const stored = storedAnswerSchema.safeParse(claim.outcome);
    if (stored.success) return stored.data;
    throw new WritError("internal", "the stored outcome of this Idempotency-Key is unreadable", {
      suggestedFix: "use a new Idempotency-Key; check the result of the first request before retrying",
      effectCommitted: "unknown",
    });
  }
  let answer: StoredAnswer;
  try {
    answer = await work();
  } catch (error) {
    const e = error instanceof WritError ? error : undefined;
    // Refusals that ran nothing and anything internal are not replayed: the key is released.
    if (e === undefined || e.category === "internal" || e.effectCommitted === false) {
      if (e !== undefined && e.effectCommitted === false && e.category !== "internal") {
        await store.completeIdempotency(owner, key, { status: e.httpStatus, body: e.toJSON() });
      } else {
        await store.releaseIdempotency(owner, key);
      }
      throw error;
    }
    answer = { status: e.httpStatus, body: e.toJSON() };
  }
  // Refused by limits, nothing ran: the key is released, so it can be retried after Retry-After.
  if (answer.status === 429) {
    await store.releaseIdempotency(owner, key);
    return answer;
  }
  await store.completeIdempotency(owner, key, answer);
  return answer;
}
