/**
 * Checking a verified chain against checkpoints (the store's and a witness's): each checkpoint's
 * signature must verify with the published checkpoint keys, the log must reach its seq, and the
 * entry there must have its hash. The chain itself is checked first (`DecisionLog.verify`): an
 * intact chain whose entry at seq s has the checkpointed hash holds every entry up to s unchanged.
 */
import type { CheckpointStore, DecisionStore, StoredCheckpoint } from "../store/types.ts";
import { verifyCheckpoint } from "./checkpoint.ts";
import type { CheckpointJwks } from "./checkpoint-keys.ts";
import type { WitnessItem } from "./checkpoint-witness.ts";

export type CheckpointProblemReason =
  /** The signature does not verify with the published keys (forged, altered, unknown key). */
  | "bad_signature"
  /** Not a checkpoint at all (not a JWS, not `{seq, hash, time}`, an unreadable witness line). */
  | "malformed"
  /** The log ends before the checkpoint's seq: entries were deleted from its end. */
  | "log_ends_before"
  /** The entry at the checkpoint's seq has another hash: the log was rewritten. */
  | "hash_mismatch"
  /** The store's row says something else than its signed payload. */
  | "row_mismatch";

export interface CheckpointProblem {
  /** `store`, or the witness (its file or URL). */
  source: string;
  /** The signed seq and time, when the checkpoint could be read; the witness line otherwise. */
  seq: number | null;
  time: string | null;
  line?: number;
  reason: CheckpointProblemReason;
  detail: string;
}

export interface CheckpointReport {
  /** How many checkpoints were checked, per source. */
  checked: Record<string, number>;
  /** The newest valid checkpoint (highest seq). */
  newest: { seq: number; time: string; source: string } | null;
  problems: CheckpointProblem[];
}

/** One checkpoint to check: from the store (with its row) or a witness line. */
export type CheckpointSource =
  | { kind: "store"; row: StoredCheckpoint }
  | { kind: "witness"; source: string; item: WitnessItem };

/** Checks `items` against the log whose verified head is `head` (seq 0 for an empty log). */
export async function checkCheckpoints(
  store: DecisionStore,
  head: { seq: number; hash: string },
  keys: CheckpointJwks | undefined,
  items: AsyncIterable<CheckpointSource> | Iterable<CheckpointSource>,
): Promise<CheckpointReport> {
  const report: CheckpointReport = { checked: {}, newest: null, problems: [] };
  const hashes = new Map<number, string | undefined>([[head.seq, head.hash]]);
  const hashAt = async (seq: number) => {
    if (!hashes.has(seq))
      hashes.set(seq, (await store.readDecisions(seq, 1)).find((e) => e.seq === seq)?.hash);
    return hashes.get(seq);
  };
  for await (const item of items) {
    const source = item.kind === "store" ? "store" : item.source;
    report.checked[source] = (report.checked[source] ?? 0) + 1;
    const problem = (
      reason: CheckpointProblemReason,
      detail: string,
      signed?: { seq: number; time: string },
    ) => {
      report.problems.push({
        source,
        seq: signed?.seq ?? null,
        time: signed?.time ?? null,
        ...(item.kind === "witness" ? { line: item.item.line } : {}),
        reason,
        detail,
      });
    };
    let jws: string;
    if (item.kind === "store") jws = item.row.jws;
    else if ("jws" in item.item) jws = item.item.jws;
    else {
      problem("malformed", item.item.problem);
      continue;
    }
    const verified = await verifyCheckpoint(jws, keys);
    if (!verified.ok) {
      problem(verified.reason, verified.detail, item.kind === "store" ? item.row : undefined);
      continue;
    }
    const signed = verified.payload;
    if (item.kind === "store") {
      const { seq, hash, time } = item.row;
      if (seq !== signed.seq || hash !== signed.hash || time !== signed.time) {
        problem(
          "row_mismatch",
          `the row says seq ${seq}, hash ${hash}, time ${time}; its signature says otherwise`,
          signed,
        );
        continue;
      }
    }
    if (signed.seq > head.seq) {
      problem(
        "log_ends_before",
        `the log ends at seq ${head.seq}, but this checkpoint shows it reached seq ${signed.seq}: ${signed.seq - head.seq} entries are missing from its end`,
        signed,
      );
      continue;
    }
    const actual = await hashAt(signed.seq);
    if (actual !== signed.hash) {
      problem(
        "hash_mismatch",
        `the entry at seq ${signed.seq} has hash ${actual ?? "(none)"}, the checkpoint says ${signed.hash}: the log was rewritten`,
        signed,
      );
      continue;
    }
    if (report.newest === null || signed.seq > report.newest.seq) {
      report.newest = { seq: signed.seq, time: signed.time, source };
    }
  }
  return report;
}

const STORE_BATCH = 500;

/** The store's checkpoints, oldest first, as sources for `checkCheckpoints`. */
export async function* storeCheckpoints(store: CheckpointStore): AsyncGenerator<CheckpointSource> {
  let from = 1;
  for (;;) {
    const rows = await store.readCheckpoints(from, STORE_BATCH);
    const last = rows.at(-1);
    if (last === undefined) return;
    for (const row of rows) yield { kind: "store", row };
    from = last.seq + 1;
  }
}
