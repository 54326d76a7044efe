/**
 * The decision log's chain, the same for every store: new entries are checked and put in their
 * stored form, then linked after the head (seq + 1, prev_hash = the head's hash) and hashed. A
 * store only reads the head and writes the result, under its own lock, in one transaction.
 *
 * An entry's hash is SHA-256 (hex) of the RFC 8785 canonical JSON of the entry without its
 * `hash`: every stored field, `seq` and `prev_hash` included, so an edit, a deletion or a
 * reordering changes a hash or breaks a link. The stored text of an entry is the canonical JSON
 * of its body, made once per entry: the text hashed is the same members with `prev_hash` and
 * `seq` merged in at their sorted places, so nothing is serialized twice.
 */
import type { z } from "zod";
import { canonicalJson, sha256Hex } from "../core/digest.ts";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import type { DecisionLogEntry, NewDecisionEntry } from "./decision-entry.ts";
import { jsonText, lastRowSchema, parseStored } from "./rows.ts";
import { bodyOfNewEntry, decisionBodySchema, entryFromBody, GENESIS_HASH } from "./schema.ts";

/** The head of the log: its last entry's seq and hash. */
export const HEAD_SQL = "SELECT seq, hash FROM decisions ORDER BY seq DESC LIMIT 1";

/** The hash of an entry (see above); a `hash` field, if the value carries one anyway, is left out. */
export function entryHash(entry: Omit<DecisionLogEntry, "hash">): string {
  const fields = Object.fromEntries(Object.entries(entry).filter(([key]) => key !== "hash"));
  return sha256Hex(canonicalJson(fields));
}

export interface PreparedEntry {
  body: z.output<typeof decisionBodySchema>;
  /** The canonical JSON members of the body, `[name, "name":value]`, in canonical (sorted) order. */
  members: Member[];
  /** The JSON text stored (and read back): the canonical JSON of the body. */
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
  return entries.map((entry) => prepareEntryText(entryText(entry)));
}

/** A new entry's body as JSON text: what crosses to the writer thread (cheaper than a clone). */
export function entryText(entry: NewDecisionEntry): string {
  return jsonText(bodyOfNewEntry(entry), "/entry");
}

/** `prepareEntries` for an entry already made JSON text by `entryText`. */
export function prepareEntryText(text: string): PreparedEntry {
  const parsed = decisionBodySchema.safeParse(JSON.parse(text));
  if (!parsed.success) {
    throw new WritError("invalid_argument", "the decision log entry is invalid", {
      fieldErrors: fieldErrorsFromZod(parsed.error, "/entry"),
      suggestedFix: "build entries with the decision log (DecisionLog.append), which fills every field",
    });
  }
  const body = { ...parsed.data, timestamp: new Date(parsed.data.timestamp).toISOString() };
  const members = canonicalMembers(body);
  return {
    body,
    members,
    text: joinMembers(members),
    codes: new Set(body.reasons.map((reason) => reason.code)),
  };
}

/** Links a prepared entry after `prevHash` at `seq` and hashes it. */
export function chainEntry(prepared: PreparedEntry, seq: number, prevHash: string): DecisionLogEntry {
  const unhashed = entryFromBody(seq, prepared.body, prevHash);
  const linked = mergeMembers(prepared.members, [
    member("prev_hash", JSON.stringify(prevHash)),
    member("seq", JSON.stringify(seq)),
  ]);
  return { ...unhashed, hash: sha256Hex(joinMembers(linked)) };
}

/**
 * Links prepared entries after the head row (`HEAD_SQL`'s answer; undefined for an empty log),
 * in order: the entries to store, each with its seq, prev_hash and hash.
 */
export function chainAfter(head: unknown, prepared: readonly PreparedEntry[]): DecisionLogEntry[] {
  const last = head === undefined ? undefined : parseStored(lastRowSchema, head, "the last decision");
  let seq = last?.seq ?? 0;
  let prevHash = last?.hash ?? GENESIS_HASH;
  return prepared.map((entry) => {
    seq += 1;
    const chained = chainEntry(entry, seq, prevHash);
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

// ---------------------------------------------------------------------------------- helpers

/** A member of a canonical JSON object: its key, and its text (`"key":value`). */
type Member = readonly [key: string, text: string];

function member(key: string, valueJson: string): Member {
  return [key, `${JSON.stringify(key)}:${valueJson}`];
}

function joinMembers(members: readonly Member[]): string {
  return `{${members.map(([, text]) => text).join(",")}}`;
}

/**
 * The canonical members of an object, sorted as RFC 8785 sorts keys (by UTF-16 code units,
 * which is how JavaScript compares strings); members whose value is undefined are left out.
 */
function canonicalMembers(value: Record<string, unknown>): Member[] {
  return Object.keys(value)
    .filter((key) => value[key] !== undefined)
    .sort()
    .map((key) => member(key, canonicalJson(value[key])));
}

/** Two sorted member lists (with distinct keys) merged into one sorted list. */
function mergeMembers(a: readonly Member[], b: readonly Member[]): Member[] {
  const out: Member[] = [];
  let j = 0;
  for (const m of a) {
    for (let next = b[j]; next !== undefined && next[0] < m[0]; next = b[++j]) out.push(next);
    out.push(m);
  }
  out.push(...b.slice(j));
  return out;
}
