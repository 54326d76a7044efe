/**
 * Ids of what Writ stores under an index (decisions, grant ids, approvals): UUIDs of version 7
 * (RFC 9562, section 5.7), whose first 48 bits are the Unix time in milliseconds. A new id sorts
 * after the ones made before it, so its row goes at the end of its index (the pages a commit
 * writes are the few last ones) instead of on a random page of an index that grows with the log
 * (with version 4 UUIDs, each decision dirtied one more page of `decisions_decision_id`, to read
 * and to write again: `bench/writer.ts` measures it). The other 74 bits are random, those of a
 * `crypto.randomUUID()` (its version nibble replaced), so ids stay unguessable and unique.
 */
import { randomUUID } from "node:crypto";

/** A version 7 UUID for the time `now` (milliseconds since the epoch; the clock by default). */
export function timeOrderedUuid(now: number = Date.now()): string {
  // xxxxxxxx-xxxx-4xxx-Nxxx-xxxxxxxxxxxx: everything after the version nibble is random.
  const random = randomUUID();
  const time = Math.max(0, Math.floor(now)).toString(16).padStart(12, "0").slice(-12);
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}
