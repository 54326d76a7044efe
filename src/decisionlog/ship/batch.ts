/**
 * One upload's body: the first entries of a backlog, in seq order, as OPA decision-log events in
 * a gzipped JSON array no larger than the size limit (OPA's `upload_size_limit_bytes` limits the
 * gzipped body too). Gzip sizes do not add up, so a prefix is compressed to learn its size: the
 * first guess comes from the compression ratio of the previous batch, and each next guess scales
 * the prefix by how far the last one was from the target, a few compressions per batch in all.
 */
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { DecisionLogEntry } from "../../store/types.ts";
import { toOpaDecisionEvent } from "../opa.ts";

const gzipAsync = promisify(gzip);

/**
 * Events are made into JSON only up to twice the limit times the expected ratio (the rest waits
 * for the next batch), and never beyond this many times the limit (JSON compresses ~5–10×).
 */
const MAX_RATIO = 25;
/** The gzipped size aimed at, as a share of the limit; a body from `GOOD_ENOUGH` of it up is kept. */
const TARGET = 0.95;
const GOOD_ENOUGH = 0.9;
/** Compressions per batch at most (the best body that fits so far is kept). */
const MAX_TRIES = 8;
/** The ratio (uncompressed / gzipped) guessed before any batch was compressed. */
export const INITIAL_RATIO = 5;

export interface Batch {
  /** The gzipped JSON array. */
  body: Buffer;
  /** How many entries it holds (the first `count` of those given). */
  count: number;
  /** The seq of its last entry: the cursor once the service acknowledged it. */
  lastSeq: number;
  /** One entry alone that is larger than the limit: sent anyway, since no entry is ever dropped. */
  oversized: boolean;
  /** Uncompressed / gzipped size of the body: the next batch's first guess. */
  ratio: number;
}

/**
 * The first upload of `entries` (non-empty, in seq order) within `limitBytes` gzipped: all of
 * them when they fit, else a prefix of at least `GOOD_ENOUGH` of the limit or one that one more
 * entry would make too large.
 */
export async function firstBatch(
  entries: readonly DecisionLogEntry[],
  limitBytes: number,
  ratio = INITIAL_RATIO,
): Promise<Batch> {
  // ends[i]: the uncompressed size of the array of the first i + 1 events.
  const texts: string[] = [];
  const ends: number[] = [];
  let raw = 1;
  const rawLimit = limitBytes * Math.min(MAX_RATIO, 2 * ratio);
  for (const entry of entries) {
    const text = JSON.stringify(toOpaDecisionEvent(entry));
    if (texts.length > 0 && raw + text.length + 1 > rawLimit) break;
    texts.push(text);
    raw += text.length + 1;
    ends.push(raw);
  }
  /** How many events fit in `bytes` uncompressed (at least 1). */
  const countWithin = (bytes: number) => Math.max(1, ends.filter((end) => end <= bytes).length);
  const batchOf = (body: Buffer, count: number): Batch => ({
    body,
    count,
    lastSeq: entries[count - 1]?.seq ?? 0,
    oversized: body.length > limitBytes,
    ratio: (ends[count - 1] ?? 1) / body.length,
  });

  let fits: { count: number; body: Buffer } | undefined;
  let over = texts.length + 1;
  let count = Math.min(texts.length, countWithin(limitBytes * TARGET * ratio));
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const body = await gzipAsync(`[${texts.slice(0, count).join(",")}]`);
    if (body.length <= limitBytes) {
      fits = { count, body };
      if (count === texts.length || body.length >= limitBytes * GOOD_ENOUGH) break;
    } else {
      if (count === 1) return batchOf(body, 1);
      over = count;
    }
    // Scale the prefix by how far this body was from the target, strictly between the longest
    // prefix known to fit and the shortest known not to.
    const low = (fits?.count ?? 0) + 1;
    if (low >= over) break;
    const scaled = countWithin(((ends[count - 1] ?? 1) * limitBytes * TARGET) / body.length);
    count = Math.min(over - 1, Math.max(low, scaled));
  }
  if (fits === undefined) {
    // Every guess was too large: the first entry alone (sent even if it is too large).
    return batchOf(await gzipAsync(`[${texts[0] ?? ""}]`), 1);
  }
  return batchOf(fits.body, fits.count);
}
