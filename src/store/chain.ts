/**
 * The decision log's chain, the same for every store: new entries are checked and put in their
 * stored form, then linked after the head (seq + 1, prev_hash = the head's hash) and hashed. A
 * store only reads the head and writes the result, under its own lock, in one transaction.
 */
import type { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import { jsonText, lastRowSchema, parseStored } from "./rows.ts";
import { bodyOfNewEntry, decisionBodySchema, entryFromBody, GENESIS_HASH, hashSchema } from "./schema.ts";
import type { DecisionLogEntry, NewDecisionEntry } from "./types.ts";

/** What the stores hash entries with (`hashEntry` of src/decisionlog). */
export type ComputeHash = (entry: Omit<DecisionLogEntry, "hash">) => string;

/** The head of the log: its last entry's seq and hash. */
export const HEAD_SQL = "SELECT seq, hash FROM decisions ORDER BY seq DESC LIMIT 1";

export interface PreparedEntry {
  body: z.output<typeof decisionBodySchema>;
  /** The JSON text stored (and read back, and hashed). */
  text: string;
  /** Its distinct reason codes. */
  codes: Set<string>;
}

/**
 * Checks new entries and puts them in the form they will be read back in: round-tripped through
 * JSON and the schema, so the hash covers the stored form (no undefined, no Dates, defaults
 * filled in, timestamps normalized).
 */
export function prepareEntries(entries: readonly NewDecisionEntry[]): PreparedEntry[] {
  return entries.map((entry) => {
    const parsed = decisionBodySchema.safeParse(JSON.parse(jsonText(bodyOfNewEntry(entry), "/entry")));
    if (!parsed.success) {
      throw new WritError("invalid_argument", "the decision log entry is invalid", {
        fieldErrors: fieldErrorsFromZod(parsed.error, "/entry"),
        suggestedFix: "build entries with the decision log (DecisionLog.append), which fills every field",
      });
    }
    const body = { ...parsed.data, timestamp: new Date(parsed.data.timestamp).toISOString() };
    return { body, text: JSON.stringify(body), codes: new Set(body.reasons.map((reason) => reason.code)) };
  });
}

/** Links a prepared entry after `prevHash` at `seq` and hashes it; refuses a hash that is not one. */
export function chainEntry(
  prepared: PreparedEntry,
  seq: number,
  prevHash: string,
  computeHash: ComputeHash,
): DecisionLogEntry {
  const unhashed = entryFromBody(seq, prepared.body, prevHash);
  const hash = computeHash(unhashed);
  if (!hashSchema.safeParse(hash).success) {
    throw new WritError("internal", "the entry hash is not 64 lowercase hex digits", {
      suggestedFix: "compute entry hashes with hashEntry from src/decisionlog",
    });
  }
  return { ...unhashed, hash };
}

/**
 * Links prepared entries after the head row (`HEAD_SQL`'s answer; undefined for an empty log),
 * in order: the entries to store, each with its seq, prev_hash and hash.
 */
export function chainAfter(
  head: unknown,
  prepared: readonly PreparedEntry[],
  computeHash: ComputeHash,
): DecisionLogEntry[] {
  const last = head === undefined ? undefined : parseStored(lastRowSchema, head, "the last decision");
  let seq = last?.seq ?? 0;
  let prevHash = last?.hash ?? GENESIS_HASH;
  return prepared.map((entry) => {
    seq += 1;
    const chained = chainEntry(entry, seq, prevHash, computeHash);
    prevHash = chained.hash;
    return chained;
  });
}

/** The `decision_reasons` rows of chained entries: each distinct reason code with its seq. */
export function reasonRows(
  stored: readonly DecisionLogEntry[],
  prepared: readonly PreparedEntry[],
): { code: string; seq: number }[] {
  return stored.flatMap((entry, i) =>
    [...(prepared[i]?.codes ?? [])].map((code) => ({ code, seq: entry.seq })),
  );
}
