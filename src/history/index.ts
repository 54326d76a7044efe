/**
 * History facts (issue 33, `history:` in the configuration): what already happened, as the policy
 * sees it in `input.context.history.<name> = {count, sum?, last?}`.
 *
 * For a call, `applicable` finds the facts whose keys the call has (every `per` key resolves:
 * a session for `session`, the argument for `args.path`, …) and the digest of its key values;
 * `read` reads their buckets from the store (one query) before the policy runs. A fact whose
 * keys the call lacks is absent, never a guess. When the call's entry is appended, the facts it
 * matches (`match`: tool, decision, tenant) are counted in the same transaction (`counts`, handed
 * to the decision log with the entry); a fact with `executed: true` counts the call's
 * `writ/execute` entry when it ran instead (`executedCounts`).
 *
 * Precision: a fact's window is read as whole buckets of `bucket_s` = ceil(window_s / 60)
 * seconds: the buckets from the one that holds `now - window_s` on, so an entry counts for at
 * least `window_s` and at most `window_s + bucket_s` seconds after it was logged.
 */
import { canonicalJson, jsonDigest, sha256Hex } from "../core/digest.ts";
import { resolvePointer } from "../core/json-pointer.ts";
import type { CanonicalAction, DecisionKind, HistoryValue, Subject } from "../core/types.ts";
import type { HistoryCount, HistoryStore } from "../store/types.ts";
import type { FactKey, HistoryConfig, HistoryFactConfig } from "./config.ts";
import { parseFactKey } from "./config.ts";

export {
  type HistoryConfig,
  type HistoryFactConfig,
  historyConfigSchema,
  historyFactSchema,
  MAX_WINDOW_S,
  unknownHistoryTools,
} from "./config.ts";

/** The parts of a call a fact is keyed and matched by. */
export interface HistoryCall {
  subject: Pick<Subject, "id" | "tenant">;
  action: Pick<CanonicalAction, "name" | "args">;
  session?: string | undefined;
  /** The Code Mode run's id. */
  run?: string | undefined;
  resource?: { type: string; id: string } | undefined;
}

/** A configured fact, compiled. */
export interface Fact {
  readonly name: string;
  /** Its stored id: the name and a digest of what it counts (a changed definition starts afresh). */
  readonly id: string;
  readonly keys: readonly FactKey[];
  readonly windowS: number;
  readonly bucketS: number;
  /** The summed argument's JSON Pointer. */
  readonly sum: string | undefined;
  readonly tools: ReadonlySet<string> | undefined;
  readonly tenants: ReadonlySet<string> | undefined;
  readonly decisions: ReadonlySet<DecisionKind>;
  readonly executed: boolean;
}

/** A fact that applies to a call, with the digest of the call's key values. */
export interface AppliedFact {
  readonly fact: Fact;
  readonly key: string;
}

/** The facts of a call none applies to: one shared empty array. */
export const NO_FACTS: readonly AppliedFact[] = Object.freeze([]);

/** How often buckets that left every window are deleted (at most, on a read). */
const PRUNE_EVERY_MS = 10 * 60_000;

/** The configured facts as the decision stage reads them (`Gateway.history`). */
export interface HistoryFacts {
  /** The facts whose keys apply to the call, in configuration order (NO_FACTS when none). */
  applicable(call: HistoryCall): readonly AppliedFact[];
  /** Their values now (one store read): `input.context.history`. Throws when the store fails. */
  read(
    store: HistoryStore,
    applied: readonly AppliedFact[],
    now: Date,
  ): Promise<Record<string, HistoryValue>>;
  /** What a decided call's entry counts in (undefined: nothing). */
  counts(
    applied: readonly AppliedFact[],
    call: HistoryCall,
    decision: DecisionKind,
  ): HistoryCount[] | undefined;
  /** Whether a fact counts executions of `action` (then the execution needs its call's keys). */
  countsExecutionsOf(action: string): boolean;
  /** What the entry of a call that ran with its grant counts in (undefined: nothing). */
  executedCounts(call: HistoryCall): HistoryCount[] | undefined;
}

export class History implements HistoryFacts {
  readonly facts: readonly Fact[];
  #nextPrune = 0;
  /** Key texts' digests computed lately (keyOf). */
  readonly #digests = new Map<string, string>();

  constructor(config: HistoryConfig) {
    this.facts = config.map(compile);
  }

  applicable(call: HistoryCall): readonly AppliedFact[] {
    let applied: AppliedFact[] | undefined;
    for (const fact of this.facts) {
      const key = keyOf(fact, call, this.#digests);
      if (key === undefined) continue;
      applied ??= [];
      applied.push({ fact, key });
    }
    return applied ?? NO_FACTS;
  }

  async read(
    store: HistoryStore,
    applied: readonly AppliedFact[],
    now: Date,
  ): Promise<Record<string, HistoryValue>> {
    const at = now.getTime();
    const buckets = await store.historyBuckets(
      applied.map(({ fact, key }) => ({ fact: fact.id, key, since: windowStart(fact, at) })),
    );
    const values: Record<string, HistoryValue> = {};
    for (const { fact, key } of applied) {
      let count = 0;
      let sum = 0;
      let last: { at: number; decision: string } | undefined;
      for (const b of buckets) {
        if (b.fact !== fact.id || b.key !== key) continue;
        count += b.count;
        sum += b.total;
        if (last === undefined || b.last_at > last.at) last = { at: b.last_at, decision: b.last_decision };
      }
      values[fact.name] = {
        count,
        ...(fact.sum === undefined ? {} : { sum }),
        ...(last === undefined ? {} : { last: { time_ns: last.at * 1_000_000, decision_id: last.decision } }),
      };
    }
    this.#prune(store, at);
    return values;
  }

  counts(
    applied: readonly AppliedFact[],
    call: HistoryCall,
    decision: DecisionKind,
  ): HistoryCount[] | undefined {
    const counted = applied.filter(
      ({ fact }) => !fact.executed && fact.decisions.has(decision) && matches(fact, call),
    );
    return counted.length === 0 ? undefined : counted.map((a) => countOf(a, call));
  }

  countsExecutionsOf(action: string): boolean {
    return this.facts.some((fact) => fact.executed && (fact.tools === undefined || fact.tools.has(action)));
  }

  executedCounts(call: HistoryCall): HistoryCount[] | undefined {
    const counted = this.applicable(call).filter(({ fact }) => fact.executed && matches(fact, call));
    return counted.length === 0 ? undefined : counted.map((a) => countOf(a, call));
  }

  /** Deletes expired buckets now and then, off the decision's path (a failure waits for the next). */
  #prune(store: HistoryStore, at: number): void {
    if (at < this.#nextPrune) return;
    this.#nextPrune = at + PRUNE_EVERY_MS;
    store.pruneHistory(new Date(at)).catch(() => {
      this.#nextPrune = 0;
    });
  }
}

/** The first bucket a read covers: the one that holds `at - window_s`. */
function windowStart(fact: Fact, at: number): number {
  const size = fact.bucketS * 1000;
  return Math.floor((at - fact.windowS * 1000) / size) * size;
}

function matches(fact: Fact, call: HistoryCall): boolean {
  return (
    (fact.tools === undefined || fact.tools.has(call.action.name)) &&
    (fact.tenants === undefined || fact.tenants.has(call.subject.tenant))
  );
}

function countOf({ fact, key }: AppliedFact, call: HistoryCall): HistoryCount {
  let amount = 0;
  if (fact.sum !== undefined) {
    const found = resolvePointer(call.action.args, fact.sum);
    if (found.found && typeof found.value === "number" && Number.isFinite(found.value)) amount = found.value;
  }
  return { fact: fact.id, key, bucket_s: fact.bucketS, window_s: fact.windowS, amount };
}

/**
 * The digest of the call's values of the fact's keys (within its tenant): SHA-256 of their
 * canonical JSON (RFC 8785), from `digests` when that text was digested lately (a session's,
 * a subject's keys recur call after call). Undefined when a value is missing.
 */
function keyOf(fact: Fact, call: HistoryCall, digests: Map<string, string>): string | undefined {
  const values: unknown[] = [call.subject.tenant];
  for (const key of fact.keys) {
    const value = keyValue(key, call);
    if (value === undefined) return undefined;
    values.push(value);
  }
  // JSON.stringify's text is the canonical one when no value is an object (RFC 8785 writes
  // strings and numbers as ECMAScript does); an object's keys must be sorted.
  const text = values.every(flat) ? JSON.stringify(values) : canonicalJson(values);
  if (text.length > KEPT_TEXT_MAX) return sha256Hex(text);
  let digest = digests.get(text);
  if (digest === undefined) {
    digest = sha256Hex(text);
    if (digests.size >= DIGESTS_KEPT) digests.delete(digests.keys().next().value ?? "");
    digests.set(text, digest);
  }
  return digest;
}

/** How many key texts' digests are kept (the oldest forgotten first), and the longest text kept. */
const DIGESTS_KEPT = 4096;
const KEPT_TEXT_MAX = 1024;

/** A string, a finite number, a boolean or null, or an array of them. */
function flat(value: unknown): boolean {
  return Array.isArray(value) ? value.every(scalar) : scalar(value);
}

function scalar(value: unknown): boolean {
  return (
    typeof value === "string" ||
    typeof value === "boolean" ||
    value === null ||
    (typeof value === "number" && Number.isFinite(value))
  );
}

function keyValue(key: FactKey, call: HistoryCall): unknown {
  switch (key.kind) {
    case "subject":
      return call.subject.id;
    case "tenant":
      return call.subject.tenant;
    case "session":
      return call.session;
    case "run":
      return call.run;
    case "resource":
      return call.resource === undefined ? undefined : [call.resource.type, call.resource.id];
    case "args": {
      const found = resolvePointer(call.action.args, key.pointer);
      return found.found ? found.value : undefined;
    }
  }
}

function compile(c: HistoryFactConfig): Fact {
  const set = <T>(values: readonly T[] | undefined) => (values === undefined ? undefined : new Set(values));
  const keys = c.per.map((text) => parseFactKey(text)).filter((k) => k !== undefined);
  const sum = c.sum === undefined ? undefined : parseFactKey(c.sum);
  const bucketS = Math.max(1, Math.ceil(c.window_s / 60));
  const decisions = c.match.decision ?? ["allow", "allow_with_conditions"];
  const counted = {
    match: { ...c.match, decision: [...decisions].sort() },
    per: c.per,
    sum: c.sum ?? null,
    bucketS,
  };
  return {
    name: c.name,
    id: `${c.name}:${jsonDigest(counted).slice(0, 16)}`,
    keys,
    windowS: c.window_s,
    bucketS,
    sum: sum?.kind === "args" ? sum.pointer : undefined,
    tools: set(c.match.tools),
    tenants: set(c.match.tenants),
    decisions: new Set(decisions),
    executed: c.match.executed,
  };
}
