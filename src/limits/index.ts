/**
 * Budgets and rate limits (issue 18, `limits:` in the configuration), enforced at the decision
 * stage. For a call, `Limits.applicable` finds the limits that apply (a lookup by action name and
 * a match; nothing else for a call no limit names). Before the policy runs, `meter` reads their
 * buckets from the store: `input.context.usage`, so Rego can decide on them too. When the policy
 * allows, `charge` takes the call's cost from every bucket at once, atomically in the store
 * (shared by every instance on it): all or nothing. Over any limit, the call is refused with
 * `rate_limited` and a `retry_after` computed from the buckets; it consumes nothing.
 */
import { WritError } from "../core/errors.ts";
import { atPointer } from "../core/json-pointer.ts";
import type { CanonicalAction, LimitUsage, Subject } from "../core/types.ts";
import type { LimitBucket, LimitCharge, Store } from "../store/types.ts";
import type { LimitConfig, LimitDimension, LimitsConfig } from "./config.ts";

export {
  type LimitConfig,
  type LimitsConfig,
  type LimitsConfigInput,
  limitConfigSchema,
  limitsConfigSchema,
  unknownLimitTools,
} from "./config.ts";

export type LimitKind = LimitUsage["kind"];

/** A configured limit, ready to match calls and name buckets. */
export interface Limit {
  readonly name: string;
  readonly kind: LimitKind;
  readonly capacity: number;
  /** How much drains per second (0: a step budget). */
  readonly drainPerSecond: number;
  readonly windowS: number | undefined;
  /** The value budget's argument. */
  readonly pointer: string | undefined;
  readonly per: readonly LimitDimension[];
  readonly tenants: ReadonlySet<string> | undefined;
  readonly subjects: ReadonlySet<string> | undefined;
  readonly sideEffects: ReadonlySet<string> | undefined;
  /** Contract names; undefined: every tool. */
  readonly tools: readonly string[] | undefined;
  /** How the limit reads in a refusal: "30 calls per 60 s per subject". */
  readonly describe: string;
}

/** What a call's limits were read as before the policy: their buckets and the usage shown to it. */
export interface Metered {
  limits: readonly Limit[];
  buckets: LimitBucket[];
  usage: Record<string, LimitUsage>;
}

const NONE: readonly Limit[] = Object.freeze([]);

/** The parts of a call a limit matches and counts by. */
export interface MeteredCall {
  subject: Pick<Subject, "id" | "tenant">;
  action: Pick<CanonicalAction, "name" | "side_effect">;
  session: string | undefined;
}

function compile(c: LimitConfig): Limit {
  const set = (values: readonly string[] | undefined) => (values === undefined ? undefined : new Set(values));
  // A step budget is always per session (within its subject); the others default to per subject.
  const per: LimitDimension[] = [...(c.per ?? (c.steps !== undefined ? ["session"] : ["subject"]))];
  if (c.steps !== undefined && !per.includes("session")) per.push("session");
  const common = {
    name: c.name,
    per,
    tenants: set(c.match.tenants),
    subjects: set(c.match.subjects),
    sideEffects: set(c.match.side_effect),
    tools: c.match.tools,
  };
  const perText = per.length === 0 ? "" : ` per ${per.join(" and ")}`;
  if (c.calls !== undefined) {
    const window = c.window_s ?? 1;
    return {
      ...common,
      kind: "calls",
      capacity: c.burst ?? c.calls,
      drainPerSecond: c.calls / window,
      windowS: window,
      pointer: undefined,
      describe: `${c.calls} calls per ${window} s${c.burst === undefined ? "" : ` (bursts of ${c.burst})`}${perText}`,
    };
  }
  if (c.value !== undefined) {
    return {
      ...common,
      kind: "value",
      capacity: c.value.max,
      drainPerSecond: c.value.max / c.value.window_s,
      windowS: c.value.window_s,
      pointer: c.value.pointer,
      describe: `a total ${c.value.pointer} of ${c.value.max} per ${c.value.window_s} s${perText}`,
    };
  }
  const steps = c.steps ?? 1;
  return {
    ...common,
    kind: "steps",
    capacity: steps,
    drainPerSecond: 0,
    windowS: undefined,
    pointer: undefined,
    describe: `${steps} granted calls${perText}`,
  };
}

/** Rounds what a bucket holds for the policy and the messages (drained buckets are fractional). */
function rounded(n: number): number {
  return Math.round(n * 1000) / 1000;
}

export class Limits {
  readonly #all: readonly Limit[];
  /** Per action name: the limits that name it or name no tool, in configuration order. */
  readonly #byAction = new Map<string, readonly Limit[]>();

  constructor(config: LimitsConfig) {
    this.#all = config.map(compile);
  }

  get size(): number {
    return this.#all.length;
  }

  /** The limits that apply to a call; the same empty array (nothing allocated) when none does. */
  applicable(subject: MeteredCall["subject"], action: MeteredCall["action"]): readonly Limit[] {
    if (this.#all.length === 0) return NONE;
    const candidates = this.#candidates(action.name);
    if (candidates.length === 0) return NONE;
    let applied: Limit[] | undefined;
    for (const limit of candidates) {
      if (limit.tenants !== undefined && !limit.tenants.has(subject.tenant)) continue;
      if (limit.subjects !== undefined && !limit.subjects.has(subject.id)) continue;
      if (limit.sideEffects !== undefined && !limit.sideEffects.has(action.side_effect)) continue;
      applied ??= [];
      applied.push(limit);
    }
    return applied ?? NONE;
  }

  #candidates(action: string): readonly Limit[] {
    let found = this.#byAction.get(action);
    if (found === undefined) {
      const matching = this.#all.filter((l) => l.tools === undefined || l.tools.includes(action));
      found = matching.length === 0 ? NONE : matching;
      // Action names come from contracts (a closed set), so this map stays small.
      this.#byAction.set(action, found);
    }
    return found;
  }
}

/** The buckets of `limits` for this call, and their usage now (one store read). */
export async function meter(
  store: Pick<Store, "limitUsage">,
  limits: readonly Limit[],
  call: MeteredCall,
  now: Date,
): Promise<Metered> {
  const buckets = limits.map((limit) => ({
    key: bucketKey(limit, call),
    drainPerSecond: limit.drainPerSecond,
  }));
  const used = await store.limitUsage(buckets, now);
  const usage: Record<string, LimitUsage> = {};
  limits.forEach((limit, i) => {
    const u = rounded(used[i] ?? 0);
    usage[limit.name] = {
      kind: limit.kind,
      used: u,
      limit: limit.capacity,
      remaining: rounded(Math.max(0, limit.capacity - u)),
      ...(limit.windowS === undefined ? {} : { window_s: limit.windowS }),
    };
  });
  return { limits, buckets, usage };
}

/** The bucket a call is counted in: the limit and the values it is counted per. */
export function bucketKey(limit: Limit, call: MeteredCall): string {
  const per = new Set(limit.per);
  const session = per.has("session");
  const subject = session || per.has("subject");
  return JSON.stringify([
    limit.name,
    subject || per.has("tenant") ? call.subject.tenant : null,
    subject ? call.subject.id : null,
    // Calls without a session share their subject's one "no session" count.
    session ? (call.session ?? null) : null,
    per.has("tool") ? call.action.name : null,
  ]);
}

/** What a metered call costs in each of its buckets; an error when a value budget cannot count it. */
function chargesOf(metered: Metered, args: Record<string, unknown>): LimitCharge[] | WritError {
  const charges: LimitCharge[] = [];
  for (const [i, limit] of metered.limits.entries()) {
    let cost = 1;
    if (limit.pointer !== undefined) {
      const value = atPointer(args, limit.pointer);
      if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
        // Fail closed: a value the budget cannot count (missing, not a number, negative) is refused.
        return new WritError(
          "invalid_argument",
          `limit ${limit.name} sums ${limit.pointer}, and this call's ${limit.pointer} is ${value === undefined ? "missing" : "not a non-negative number"}`,
          {
            fieldErrors: [{ path: `/arguments${limit.pointer}`, message: "must be a non-negative number" }],
            suggestedFix: `send ${limit.pointer} as a non-negative number`,
          },
        );
      }
      cost = value;
    }
    const bucket = metered.buckets[i];
    if (bucket === undefined) continue;
    charges.push({ ...bucket, cost, capacity: limit.capacity });
  }
  return charges;
}

export interface Charged {
  /** Undefined when every bucket was charged; else why the call is refused (nothing was charged). */
  refusal: WritError | undefined;
  /** The limits that had no room (their names), for the log and the metrics. */
  over: string[];
}

/**
 * Charges an allowed call's cost (`args`: its final arguments, the conditions' overrides
 * applied) to every bucket at once. Over any limit: `rate_limited`, with the seconds after which
 * every bucket that was over has room again (`retry_after`); not retryable when one never will
 * (a step budget, or a value larger than the whole budget).
 */
export async function charge(
  store: Pick<Store, "consumeLimits">,
  metered: Metered,
  args: Record<string, unknown>,
  now: Date,
): Promise<Charged> {
  const charges = chargesOf(metered, args);
  if (charges instanceof WritError) return { refusal: charges, over: [] };
  const result = await store.consumeLimits(charges, now);
  if (result.ok) return { refusal: undefined, over: [] };
  let wait = 0;
  const over = result.over.flatMap((i) => {
    const c = charges[i];
    const limit = metered.limits[i];
    if (c === undefined || limit === undefined) return [];
    const seconds =
      c.drainPerSecond === 0 || c.cost > c.capacity
        ? Number.POSITIVE_INFINITY
        : ((result.used[i] ?? 0) + c.cost - c.capacity) / c.drainPerSecond;
    wait = Math.max(wait, seconds);
    return [limit];
  });
  const names = over.map((l) => l.name);
  const detail = over
    .map((l) => {
      const used = rounded(result.used[metered.limits.indexOf(l)] ?? 0);
      return `${l.name} (${l.describe}; ${used} used)`;
    })
    .join(", ");
  if (!Number.isFinite(wait)) {
    return {
      over: names,
      refusal: new WritError("rate_limited", `this call is over the limit ${detail}, which will not refill`, {
        retryable: false,
        suggestedFix: over.some((l) => l.kind === "steps")
          ? "the session's step budget is spent: finish the task, or start a new session"
          : "the call asks for more than the whole budget: ask for less",
      }),
    };
  }
  const retryAfter = Math.max(1, Math.ceil(wait));
  return {
    over: names,
    refusal: new WritError("rate_limited", `this call is over the limit ${detail}`, {
      retryable: true,
      retryAfter,
      suggestedFix: `wait ${retryAfter} s (retry_after) and send the call again`,
    }),
  };
}
