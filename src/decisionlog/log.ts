/**
 * The decision log (DESIGN section 8): one hash-chained entry per decision, written through a
 * `Store`, redacted before it is stored, verifiable end to end and exportable as NDJSON.
 */
import { WritError } from "../core/errors.ts";
import { timeOrderedUuid } from "../core/ids.ts";
import type { Condition, DecisionKind, Reason } from "../core/types.ts";
import {
  GENESIS_HASH,
  matchesDecisionFilter,
  normalizeFilter,
  UnreadableEntryError,
} from "../store/index.ts";
import type {
  ChainLink,
  DecisionFilter,
  DecisionLogEntry,
  DecisionPage,
  DecisionStore,
  HistoryCount,
  NewDecisionEntry,
  TenantScope,
} from "../store/types.ts";
import { hashEntry } from "./hash.ts";
import { type RedactionRules, type ResolvedRedactionRules, redact, resolveRedactionRules } from "./redact.ts";
import { OpenRequests } from "./requests.ts";

/** Most entries written in one transaction. */
const MAX_BATCH = 256;

/**
 * A batch is sent as soon as it holds this many entries, when the store has room for another
 * batch in flight, rather than at the end of the turn: when many answers come back at once,
 * their callers' next decisions are made in one turn, and a batch of all of them would keep the
 * writer idle while they are decided, then this thread idle while they are written (a convoy).
 * Sent in parts, the writer starts on the first while this thread decides the rest. Only for a
 * store that applies appends in call order (SQLite's writer thread, measured there); a store
 * with one batch in flight (PostgreSQL) sends at the end of the turn.
 */
const SEND_AT = 8;

/** What a caller knows about a decision; the log adds the id (unless given), time and redaction. */
export interface DecisionParts {
  /** Defaults to a fresh UUID; pass one when it must be known before logging (a grant's `dec`). */
  decision_id?: string;
  /** The policy entrypoint, e.g. `writ/decision`; `writ/intake` for refusals before policy. */
  path: string;
  /** The policy input, unredacted: the log redacts it. */
  input: unknown;
  /** The policy's validated answer; omitted when no policy ran. */
  result?: unknown;
  /** The policy bundle revision, stored as `bundles.writ.revision`. */
  policy_revision: string;
  metrics?: Record<string, number>;
  subject: string | null;
  tenant: string | null;
  action: string | null;
  resource: { type: string; id: string } | null;
  decision: DecisionKind | "error";
  reasons?: Reason[];
  error?: string | null;
  grant_jti?: string | null;
  approval_id?: string | null;
  conditions?: Condition[];
  /** Writ's own id of the request (minted per request, never the caller's). */
  request_id: string;
  /** The id the caller sent, when known; by default the one of the open request `request_id` (requests.ts). */
  caller_request_id?: string | undefined;
  /** The history facts the entry counts in, written with it (not part of the entry). */
  history?: readonly HistoryCount[] | undefined;
}

export interface DecisionLogOptions {
  /** How inputs are redacted (default: erase the arguments of `secret` actions, detect secrets). */
  redaction?: RedactionRules;
  /** The clock for entry timestamps (default: the system clock). */
  now?: () => Date;
}

export type BreakReason = "hash_mismatch" | "broken_link" | "missing_entries" | "unreadable";

export type VerifyResult =
  | {
      ok: true;
      /** How many entries were checked: the whole log. */
      entries: number;
      /** The last entry's hash (the genesis hash for an empty log): record it elsewhere to detect truncation later. */
      head_hash: string;
    }
  | {
      ok: false;
      /** How many entries were checked and found good before the break. */
      entries_checked: number;
      first_broken: {
        /** The first seq that is wrong (for `missing_entries`: the first missing one). */
        seq: number;
        /** The id of the entry at that seq; null when it is missing or its id cannot be read. */
        decision_id: string | null;
        reason: BreakReason;
      };
    };

/** An appended decision: its id and where it went in the chain. */
export interface LoggedDecision extends ChainLink {
  decision_id: string;
}

/** Batches in flight at once when the store applies appends in call order (else one). */
const ORDERED_DEPTH = 3;

type Waiting = {
  entry: NewDecisionEntry;
  resolve: (logged: LoggedDecision) => void;
  reject: (error: unknown) => void;
};

const DEFAULT_VERIFY_BATCH = 1000;
const EXPORT_BATCH = 1000;

/** The decision log as the gateway's parts use it (`Gateway.log`): appended, read, verified. */
export interface AuditLog {
  /** The requests being answered: their callers' ids, and whether each logged a refusal. */
  readonly requests: OpenRequests;
  beforeDrain(hook: () => Promise<void>): void;
  append(parts: DecisionParts): Promise<LoggedDecision>;
  /** Resolves once every entry appended so far is written. */
  drain(): Promise<void>;
  get(decisionId: string): Promise<DecisionLogEntry | undefined>;
  query(filter?: DecisionFilter, limit?: number, cursor?: string): Promise<DecisionPage>;
  getIn(scope: TenantScope, decisionId: string): Promise<DecisionLogEntry | undefined>;
  queryIn(
    scope: TenantScope,
    filter?: DecisionFilter,
    limit?: number,
    cursor?: string,
  ): Promise<DecisionPage>;
  verify(options?: { batch?: number; after?: { seq: number; hash: string } }): Promise<VerifyResult>;
  exportNdjson(filter?: DecisionFilter): AsyncIterable<string>;
}

export class DecisionLog implements AuditLog {
  readonly #store: DecisionStore;
  readonly #rules: ResolvedRedactionRules;
  readonly #now: () => Date;
  #pending = 0;
  /** A send is scheduled for the end of this turn of the event loop. */
  #scheduled = false;
  /** The batches written now. */
  readonly #writing = new Set<Promise<void>>();
  readonly #queue: Waiting[] = [];

  /** The requests being answered: their callers' ids, and whether each logged a refusal. */
  readonly requests = new OpenRequests();

  /** Run when the log drains (shutdown): writers that hold entries back append them. */
  readonly #beforeDrain: Array<() => Promise<void>> = [];

  /** `hook` runs first whenever the log drains (e.g. the refusal aggregator's summaries). */
  beforeDrain(hook: () => Promise<void>): void {
    this.#beforeDrain.push(hook);
  }

  constructor(store: DecisionStore, options: DecisionLogOptions = {}) {
    this.#store = store;
    this.#rules = resolveRedactionRules(options.redaction);
    this.#now = options.now ?? (() => new Date());
  }

  /** Appends waiting for (or in) their write. Callers await their append: back pressure, not loss. */
  get pending(): number {
    return this.#pending;
  }

  /**
   * Redacts and appends one decision; resolves once the entry is durable, with its id and place
   * in the chain (`get` reads the whole entry). Appends are written in the order they were called.
   */
  append(parts: DecisionParts): Promise<LoggedDecision> {
    this.requests.noteAppend(parts);
    let entry: NewDecisionEntry;
    try {
      entry = this.#build(parts);
    } catch (error) {
      return Promise.reject(error);
    }
    this.#pending++;
    const write = new Promise<LoggedDecision>((resolve, reject) => {
      this.#queue.push({ entry, resolve, reject });
    });
    if (this.#store.ordersAppends && this.#queue.length >= SEND_AT) this.#send();
    if (!this.#scheduled) {
      this.#scheduled = true;
      // The appends of the current turn join the first batch.
      setImmediate(() => {
        this.#scheduled = false;
        this.#send();
      });
    }
    const done = () => {
      this.#pending--;
    };
    write.then(done, done);
    return write;
  }

  /**
   * Group commit: the appends that queued up while a write was in flight are written together,
   * in call order, in one transaction (one sync to disk); one that is refused fails alone. When
   * the store applies appends in call order, the next batches are sent before the last one is
   * answered (up to ORDERED_DEPTH in flight), so that the store never waits for this thread to
   * send it, and a batch goes as soon as it holds SEND_AT entries.
   */
  #send(): void {
    const depth = this.#store.ordersAppends ? ORDERED_DEPTH : 1;
    while (this.#writing.size < depth && this.#queue.length > 0) {
      const writing = this.#write(this.#queue.splice(0, MAX_BATCH)).finally(() => {
        this.#writing.delete(writing);
        this.#send();
      });
      this.#writing.add(writing);
    }
  }

  async #write(batch: readonly Waiting[]): Promise<void> {
    try {
      const appended = await this.#store.appendEachDecision(batch.map((b) => b.entry));
      for (const [i, b] of batch.entries()) {
        const result = appended[i];
        if (result?.ok) b.resolve({ decision_id: b.entry.decision_id, ...result.link });
        else b.reject(result?.error ?? new Error("the store did not answer every append of a batch"));
      }
    } catch (error) {
      for (const b of batch) b.reject(error);
    }
  }

  /** Resolves when every append called so far has finished (written or failed). */
  async drain(): Promise<void> {
    for (const hook of this.#beforeDrain) await hook();
    while (this.#scheduled || this.#writing.size > 0 || this.#queue.length > 0) {
      if (this.#writing.size === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      else await Promise.race(this.#writing);
    }
  }

  get(decisionId: string): Promise<DecisionLogEntry | undefined> {
    return this.#store.getDecision(decisionId);
  }

  /** Newest first; pass `next_cursor` back as `cursor` for the next page (limit capped at 500). */
  query(filter: DecisionFilter = {}, limit = 50, cursor?: string): Promise<DecisionPage> {
    return this.#store.queryDecisions(filter, limit, cursor);
  }

  /** The entry when it is within `scope` (review surfaces); undefined as if absent otherwise. */
  getIn(scope: TenantScope, decisionId: string): Promise<DecisionLogEntry | undefined> {
    return this.#store.getDecisionIn(scope, decisionId);
  }

  /** Like `query`, within `scope` only, with cursors bound to it (review surfaces). */
  queryIn(
    scope: TenantScope,
    filter: DecisionFilter = {},
    limit = 50,
    cursor?: string,
  ): Promise<DecisionPage> {
    return this.#store.queryDecisionsIn(scope, filter, limit, cursor);
  }

  /**
   * Walks the whole log in seq order and checks that seqs run 1, 2, 3… without gaps, that each
   * entry links to the previous entry's hash (the first to the genesis hash) and that each hash
   * matches the entry. Stops at the first break.
   *
   * With `after` (a prefix already verified: its last seq and hash), only the entries after it
   * are walked, and the first of them must link to that hash; `entries` still counts the whole
   * log. When the prefix's last entry is gone or no longer has that hash, that is the break:
   * the log was cut back or rewritten after it was verified. Other edits inside the prefix are
   * not seen: a full walk now and then must catch them (see ChainMonitor).
   */
  async verify(
    options: { batch?: number; after?: { seq: number; hash: string } } = {},
  ): Promise<VerifyResult> {
    const batch = options.batch ?? DEFAULT_VERIFY_BATCH;
    if (!Number.isSafeInteger(batch) || batch < 1) {
      throw new WritError("invalid_argument", `batch must be a positive integer, got ${String(batch)}`, {
        fieldErrors: [{ path: "/batch", message: "expected a positive integer" }],
        suggestedFix: `omit batch (default ${DEFAULT_VERIFY_BATCH}) or pass a positive integer`,
      });
    }
    const after = options.after;
    if (after !== undefined && after.seq > 0) {
      const broken = (decisionId: string | null, reason: BreakReason): VerifyResult => ({
        ok: false,
        entries_checked: after.seq - 1,
        first_broken: { seq: after.seq, decision_id: decisionId, reason },
      });
      let last: DecisionLogEntry | undefined;
      try {
        [last] = await this.#store.readDecisions(after.seq, 1);
      } catch (error) {
        if (error instanceof UnreadableEntryError) return broken(error.decisionId, "unreadable");
        throw error;
      }
      if (last?.seq !== after.seq) return broken(null, "missing_entries");
      if (last.hash !== after.hash) return broken(last.decision_id, "hash_mismatch");
    }
    let expected = (after?.seq ?? 0) + 1;
    let prevHash = after?.hash ?? GENESIS_HASH;
    const broken = (seq: number, decisionId: string | null, reason: BreakReason): VerifyResult => ({
      ok: false,
      entries_checked: expected - 1,
      first_broken: { seq, decision_id: decisionId, reason },
    });
    for await (const item of this.#walk(batch, expected)) {
      if (item.seq !== expected) return broken(expected, null, "missing_entries");
      if (item instanceof UnreadableEntryError) return broken(item.seq, item.decisionId, "unreadable");
      if (item.prev_hash !== prevHash) return broken(item.seq, item.decision_id, "broken_link");
      if (hashEntry(item) !== item.hash) return broken(item.seq, item.decision_id, "hash_mismatch");
      prevHash = item.hash;
      expected++;
    }
    return { ok: true, entries: expected - 1, head_hash: prevHash };
  }

  /**
   * The entries that pass `filter`, oldest first, one JSON text per line (each ends with "\n"),
   * ready to write to a file or pipe through `Readable.from`.
   */
  exportNdjson(filter: DecisionFilter = {}): AsyncIterable<string> {
    const normalized = normalizeFilter(filter);
    const store = this.#store;
    return (async function* lines() {
      let from = 1;
      for (;;) {
        const entries = await store.readDecisions(from, EXPORT_BATCH);
        const last = entries.at(-1);
        if (last === undefined) return;
        for (const entry of entries) {
          if (matchesDecisionFilter(entry, normalized)) yield `${JSON.stringify(entry)}\n`;
        }
        from = last.seq + 1;
      }
    })();
  }

  #build(parts: DecisionParts): NewDecisionEntry {
    const redacted = redact(parts.input, this.#rules);
    const caller = parts.caller_request_id ?? this.requests.callerOf(parts.request_id);
    return {
      decision_id: parts.decision_id ?? timeOrderedUuid(),
      timestamp: this.#now().toISOString(),
      path: parts.path,
      input: redacted.input,
      result: parts.result,
      bundles: { writ: { revision: parts.policy_revision } },
      metrics: parts.metrics ?? {},
      erased: redacted.erased,
      masked: redacted.masked,
      subject: parts.subject,
      tenant: parts.tenant,
      action: parts.action,
      resource: parts.resource,
      decision: parts.decision,
      reasons: parts.reasons ?? [],
      error: parts.error ?? null,
      grant_jti: parts.grant_jti ?? null,
      approval_id: parts.approval_id ?? null,
      conditions: parts.conditions ?? [],
      request_id: parts.request_id,
      ...(caller === undefined ? {} : { caller_request_id: caller }),
      ...(parts.history === undefined ? {} : { history: parts.history }),
    };
  }

  /**
   * The log's rows in seq order; an unreadable row is yielded as its error (and ends the walk),
   * after every readable row before it.
   */
  async *#walk(batch: number, start = 1): AsyncGenerator<DecisionLogEntry | UnreadableEntryError> {
    let from = start;
    for (;;) {
      let entries: DecisionLogEntry[];
      try {
        entries = await this.#store.readDecisions(from, batch);
      } catch (error) {
        if (!(error instanceof UnreadableEntryError)) throw error;
        // Somewhere in this batch a row does not parse: go row by row up to it.
        for (;;) {
          try {
            const [entry] = await this.#store.readDecisions(from, 1);
            if (entry === undefined) return;
            yield entry;
            from = entry.seq + 1;
          } catch (inner) {
            if (!(inner instanceof UnreadableEntryError)) throw inner;
            yield inner;
            return;
          }
        }
      }
      const last = entries.at(-1);
      if (last === undefined) return;
      yield* entries;
      from = last.seq + 1;
    }
  }
}
