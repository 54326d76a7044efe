/**
 * The decision log's records as a store keeps them (DESIGN section 8): an entry, what a caller
 * appends, where an append went in the chain, and the filter and page of a query. `DecisionStore`
 * (decisions.ts) is what reads and writes them.
 */
import type { WritError } from "../core/errors.ts";
import type { Condition, DecisionKind, Reason } from "../core/types.ts";
import type { HistoryCount } from "./history.ts";

/** Where an appended entry went in the chain. */
export interface ChainLink {
  seq: number;
  prev_hash: string;
  hash: string;
}

/** One entry's append: where it went in the chain, or why it was refused. */
export type EntryAppend = { ok: true; link: ChainLink } | { ok: false; error: WritError };

/** A decision log entry as stored (DESIGN section 8; OPA's field names where they exist). */
export interface DecisionLogEntry {
  seq: number;
  decision_id: string;
  /** ISO 8601 time the decision was made. */
  timestamp: string;
  /** The policy entrypoint, e.g. `writ/decision`; `writ/intake` for refusals before policy. */
  path: string;
  /** The policy input as stored: redacted. */
  input: unknown;
  /** The policy's answer (validated), or undefined when no policy ran. */
  result: unknown;
  bundles: { writ: { revision: string } };
  metrics: Record<string, number>;
  /** JSON Pointers of input parts removed entirely. */
  erased: string[];
  /** JSON Pointers of input parts replaced by a marker. */
  masked: string[];
  subject: string | null;
  tenant: string | null;
  action: string | null;
  resource: { type: string; id: string } | null;
  decision: DecisionKind | "error";
  reasons: Reason[];
  /** The error category when the call failed before or instead of a decision. */
  error: string | null;
  grant_jti: string | null;
  approval_id: string | null;
  conditions: Condition[];
  /** Writ's own id of the request that made the decision (minted per request). */
  request_id: string;
  /** The `X-Request-Id` its caller sent, when it sent a valid one; absent otherwise (and in entries logged before it was kept). */
  caller_request_id?: string;
  prev_hash: string;
  hash: string;
}

/**
 * What a caller appends; the store assigns `seq`, `prev_hash` and `hash` atomically. `history`
 * (not part of the entry, never hashed) are the history facts the entry counts in, written in
 * the entry's transaction (store/history.ts).
 */
export type NewDecisionEntry = Omit<DecisionLogEntry, "seq" | "prev_hash" | "hash"> & {
  history?: readonly HistoryCount[];
};

export interface DecisionFilter {
  subject?: string;
  tenant?: string;
  action?: string;
  decision?: DecisionKind | "error";
  reason?: string;
  resourceType?: string;
  resourceId?: string;
  /** The entry's policy path: `writ/shadow` lists a shadow policy's disagreements. */
  path?: string;
  /** A Code Mode run's id: the run's own entry and every call its program made (`input.context.run.id`). */
  run?: string;
  /** Inclusive lower bound, ISO 8601. */
  since?: string;
  /** Exclusive upper bound, ISO 8601. */
  until?: string;
}

export interface DecisionPage {
  entries: DecisionLogEntry[];
  /** Opaque; pass back to get the next page. Absent on the last page. */
  next_cursor?: string;
}
