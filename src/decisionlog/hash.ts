/** The hash chain of the decision log. */
import { canonicalJson, sha256Hex } from "../core/digest.ts";
import type { DecisionLogEntry } from "../store/types.ts";

/**
 * SHA-256 (hex) of the RFC 8785 canonical JSON of an entry without its `hash`. It covers every
 * stored field, `seq` and `prev_hash` included, so an edit, a deletion or a reordering changes a
 * hash or breaks a link. A `hash` field, if the value carries one anyway, is left out.
 */
export function hashEntry(entry: Omit<DecisionLogEntry, "hash">): string {
  const fields = Object.fromEntries(Object.entries(entry).filter(([key]) => key !== "hash"));
  return sha256Hex(canonicalJson(fields));
}
