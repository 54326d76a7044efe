/**
 * One upload's body: the first entries of a backlog, in seq order, as OPA decision-log events in
 * a gzipped JSON array no larger than the size limit (OPA's `upload_size_limit_bytes` limits the
 * gzipped body too). Gzip sizes do not add up, so the longest prefix that fits is found by
 * compressing candidates (a binary search, bounded by the uncompressed size).
 */
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { DecisionLogEntry } from "../../store/types.ts";
import { toOpaDecisionEvent } from "../opa.ts";

const gzipAsync = promisify(gzip);

/** No prefix longer than this many times the limit, uncompressed, is tried (JSON compresses ~5–10×). */
const MAX_RATIO = 25;

export interface Batch {
  /** The gzipped JSON array. */
  body: Buffer;
  /** How many entries it holds (the first `count` of those given). */
  count: number;
  /** The seq of its last entry: the cursor once the service acknowledged it. */
  lastSeq: number;
  /** One entry alone that is larger than the limit: sent anyway, since no entry is ever dropped. */
  oversized: boolean;
}

/** The first upload of `entries` (non-empty, in seq order) within `limitBytes` gzipped. */
export async function firstBatch(entries: readonly DecisionLogEntry[], limitBytes: number): Promise<Batch> {
  const texts: string[] = [];
  let raw = 2;
  for (const entry of entries) {
    const text = JSON.stringify(toOpaDecisionEvent(entry));
    if (texts.length > 0 && raw + text.length + 1 > limitBytes * MAX_RATIO) break;
    texts.push(text);
    raw += text.length + 1;
  }
  const compress = (count: number) => gzipAsync(`[${texts.slice(0, count).join(",")}]`);
  const batchOf = (body: Buffer, count: number): Batch => ({
    body,
    count,
    lastSeq: entries[count - 1]?.seq ?? 0,
    oversized: body.length > limitBytes,
  });
  const all = await compress(texts.length);
  if (all.length <= limitBytes || texts.length === 1) return batchOf(all, texts.length);
  // The longest prefix that fits: `fits` fits (or is the one entry sent alone), `over` does not.
  let fits = 1;
  let fitsBody = await compress(1);
  let over = texts.length;
  while (over - fits > 1) {
    const middle = Math.floor((fits + over) / 2);
    const body = await compress(middle);
    if (body.length <= limitBytes) {
      fits = middle;
      fitsBody = body;
    } else over = middle;
  }
  return batchOf(fitsBody, fits);
}
