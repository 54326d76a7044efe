/**
 * Charging an allowed call to its limits, and the refusal when a bucket has no room: the cost of
 * each bucket (1, or a value budget's argument), and the wait until all of them have room.
 */
import { WritError } from "../core/errors.ts";
import { atPointer } from "../core/json-pointer.ts";
import type { LimitUsage } from "../core/types.ts";
import type { LimitBucket, LimitCharge, LimitStore } from "../store/types.ts";
import { type Limit, rounded } from "./limit.ts";

/** What a call's limits were read as before the policy: their buckets and the usage shown to it. */
export interface Metered {
  limits: readonly Limit[];
  buckets: LimitBucket[];
  usage: Record<string, LimitUsage>;
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
  store: Pick<LimitStore, "consumeLimits">,
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
