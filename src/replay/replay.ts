/**
 * Replay (issue 19): the logged inputs of past decisions re-run against a candidate policy, to
 * know what a policy change would change before it ships.
 *
 * The entries replayed are the policy evaluations (`path` = the entrypoint: calls and approvals,
 * as `evaluationEntry` logs them) matching a filter, read from the store a page at a time, newest
 * first; nothing is written. Each is evaluated by the candidate (a `PolicyEngine`: Writ's compiler,
 * the opa-wasm SDK) failing closed as the live gateway does, and compared with what the live
 * policy answered then (`result`; a policy failure was a deny). Only the outcome counts as a
 * change (allow → deny …); reasons and conditions are reported beside it.
 *
 * An entry whose input was redacted before it was logged (its `erased` or `masked` pointers) is
 * replayed with what was kept, and reported as inexact: its answer may differ from what the whole
 * input would give, so it is counted apart and never as a change. With the archive of revisions
 * (`archive`), the revision that decided it then is evaluated over the same kept input too (the
 * `baseline`), so that an inexact entry counts as changed only when the policies disagree over the
 * same input, not because of what redaction removed. An entry without an input is not replayable.
 */
import type { DecisionKind, Reason } from "../core/types.ts";
import { policyDecisionSchema } from "../core/types.ts";
import type { CompiledPolicyCache } from "../policy/compiled-cache.ts";
import { archivedEngine, evaluateStoredFailClosed, type PolicyEngine } from "../policy/index.ts";
import type { DecisionFilter, DecisionLogEntry, DecisionStore, PolicyRevisionStore } from "../store/types.ts";

/** What one policy said about one input: its outcome, and why. */
export interface ReplayAnswer {
  decision: DecisionKind;
  reasons: Reason[];
  conditions: unknown[];
  /** Set when the policy could not decide (the decision is then the fail-closed deny). */
  failure?: string;
}

/** One logged decision replayed. */
export interface ReplayedDecision {
  kind: "replayed";
  decision_id: string;
  seq: number;
  timestamp: string;
  subject: string | null;
  tenant: string | null;
  action: string | null;
  /** The revision that decided it then. */
  revision: string;
  before: ReplayAnswer;
  after: ReplayAnswer;
  /**
   * For an inexact entry whose revision is archived: what that revision answers over the kept
   * input (what `after` is compared with).
   */
  baseline?: ReplayAnswer;
  /**
   * Whether the outcome differs: from `before` for an exact entry; for an inexact one, from
   * `baseline` when there is one, else from `before` (then it may be redaction's doing).
   */
  changed: boolean;
  /** False when the stored input was redacted: the answer is over what was kept of it. */
  exact: boolean;
  erased: string[];
  masked: string[];
}

/** A logged decision that cannot be replayed at all. */
export interface UnreplayableDecision {
  kind: "not_replayable";
  decision_id: string;
  seq: number;
  timestamp: string;
  why: "missing_input";
}

export type ReplayResult = ReplayedDecision | UnreplayableDecision;

export interface ReplaySummary {
  /** The candidate's revision. */
  candidate_revision: string;
  /** Policy evaluations matching the filter that were looked at. */
  considered: number;
  /** Replayed with their whole input. */
  exact: number;
  /** Exact replays whose outcome changed. */
  changed: number;
  /** Counts of exact replays by `before → after` outcome. */
  transitions: Record<string, number>;
  /**
   * Replayed over a redacted input, how many of those came out different, how many were compared
   * with their archived revision over the same input.
   */
  inexact: { count: number; changed: number; baselined: number; transitions: Record<string, number> };
  not_replayable: number;
  /** Time spent reading the log and evaluating the candidate, in milliseconds. */
  read_ms: number;
  eval_ms: number;
}

export interface ReplayOptions {
  /** Which entries (time range, subject, action …); the entrypoint's evaluations among them. */
  filter?: DecisionFilter;
  /** At most this many policy evaluations (the newest). */
  limit?: number;
  /** Entries read per page (default 500). */
  pageSize?: number;
  /** The archived revisions: an inexact entry is also evaluated by the revision that decided it. */
  archive?: {
    store: Pick<PolicyRevisionStore, "getPolicyRevision">;
    /** Where their compiled modules are looked up and kept. */
    compiledCache?: CompiledPolicyCache;
  };
  signal?: AbortSignal;
}

/** The separator of a transition's key: `allow → deny`. */
export const ARROW = " → ";

/** What the live policy answered, as the entry recorded it. */
export function loggedAnswer(entry: DecisionLogEntry): ReplayAnswer {
  const result = policyDecisionSchema.safeParse(entry.result);
  if (result.success) {
    const { decision, reasons, conditions } = result.data;
    return { decision, reasons, conditions };
  }
  // No result: the policy failed, and the call was denied (entry.error names the failure).
  return {
    decision: "deny",
    reasons: entry.reasons,
    conditions: [],
    failure: entry.error ?? "policy_undefined",
  };
}

/**
 * What `engine` answers for `input`, failing closed as the decide stage does. An evaluation over
 * the time budget is tried once more before it counts: a replay shares its machine with other
 * work (and its own garbage collection), and a CI gate must not fail on one slow turn.
 */
export function candidateAnswer(engine: PolicyEngine, input: unknown, retrySlow = true): ReplayAnswer {
  const { decision, failure } = evaluateStoredFailClosed(engine, input);
  if (failure?.code === "policy_too_slow" && retrySlow) return candidateAnswer(engine, input, false);
  const answer: ReplayAnswer = {
    decision: decision.decision,
    reasons: decision.reasons,
    conditions: decision.conditions,
  };
  return failure === undefined ? answer : { ...answer, failure: failure.code };
}

/** Replays the entries of `store` against `engine`: iterate for the results, then read `summary`. */
export class Replay implements AsyncIterable<ReplayResult> {
  readonly #store: Pick<DecisionStore, "queryDecisions">;
  readonly #engine: PolicyEngine;
  readonly #options: ReplayOptions;
  readonly #summary: ReplaySummary;
  /** Engines of archived revisions, by id (undefined: not archived, or it does not load). */
  readonly #archived = new Map<string, Promise<PolicyEngine | undefined>>();

  constructor(
    store: Pick<DecisionStore, "queryDecisions">,
    engine: PolicyEngine,
    options: ReplayOptions = {},
  ) {
    this.#store = store;
    this.#engine = engine;
    this.#options = options;
    this.#summary = {
      candidate_revision: engine.revision ?? "none",
      considered: 0,
      exact: 0,
      changed: 0,
      transitions: {},
      inexact: { count: 0, changed: 0, baselined: 0, transitions: {} },
      not_replayable: 0,
      read_ms: 0,
      eval_ms: 0,
    };
  }

  /** The counts so far (complete once the iteration ended). */
  get summary(): ReplaySummary {
    return this.#summary;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ReplayResult> {
    const { limit = Number.POSITIVE_INFINITY, pageSize = 500, signal } = this.#options;
    // The store selects the entrypoint's evaluations (the path index) unless a path is asked for.
    const filter = { path: this.#engine.entrypoint, ...this.#options.filter };
    const s = this.#summary;
    let cursor: string | undefined;
    do {
      signal?.throwIfAborted();
      const started = performance.now();
      const page = await this.#store.queryDecisions(filter, pageSize, cursor);
      s.read_ms += performance.now() - started;
      for (const entry of page.entries) {
        if (entry.path !== this.#engine.entrypoint) continue;
        if (s.considered >= limit) return;
        s.considered++;
        yield await this.#replay(entry);
      }
      cursor = page.next_cursor;
    } while (cursor !== undefined && s.considered < limit);
  }

  /** The engine of an archived revision, loaded once; undefined when it is not to be had. */
  #revisionEngine(id: string): Promise<PolicyEngine | undefined> {
    const archive = this.#options.archive;
    if (archive === undefined) return Promise.resolve(undefined);
    let engine = this.#archived.get(id);
    if (engine === undefined) {
      engine = archivedEngine(archive.store, id, {
        entrypoint: this.#engine.entrypoint,
        compiledCache: archive.compiledCache,
        builtins: this.#engine.builtins,
      }).catch(() => undefined);
      this.#archived.set(id, engine);
    }
    return engine;
  }

  async #replay(entry: DecisionLogEntry): Promise<ReplayResult> {
    const s = this.#summary;
    const where = { decision_id: entry.decision_id, seq: entry.seq, timestamp: entry.timestamp };
    if (entry.input === undefined || entry.input === null) {
      s.not_replayable++;
      return { kind: "not_replayable", ...where, why: "missing_input" };
    }
    const before = loggedAnswer(entry);
    const started = performance.now();
    const after = candidateAnswer(this.#engine, entry.input);
    s.eval_ms += performance.now() - started;
    const exact = entry.erased.length === 0 && entry.masked.length === 0;
    const archived = exact ? undefined : await this.#revisionEngine(entry.bundles.writ.revision);
    const baseline = archived === undefined ? undefined : candidateAnswer(archived, entry.input);
    if (baseline !== undefined) s.inexact.baselined++;
    const changed = (baseline ?? before).decision !== after.decision;
    const key = `${before.decision}${ARROW}${after.decision}`;
    const counts = exact ? s : s.inexact;
    counts.transitions[key] = (counts.transitions[key] ?? 0) + 1;
    if (changed) counts.changed++;
    if (exact) s.exact++;
    else s.inexact.count++;
    return {
      kind: "replayed",
      ...where,
      subject: entry.subject,
      tenant: entry.tenant,
      action: entry.action,
      revision: entry.bundles.writ.revision,
      before,
      after,
      ...(baseline === undefined ? {} : { baseline }),
      changed,
      exact,
      erased: entry.erased,
      masked: entry.masked,
    };
  }
}
