/**
 * Budgets and rate limits (issue 18, `limits:` in the configuration), enforced at the decision
 * stage. For a call, `Limits.applicable` finds the limits that apply (a lookup by action name and
 * a match; nothing else for a call no limit names). Before the policy runs, `meter` reads their
 * buckets from the store: `input.context.usage`, so Rego can decide on them too. When the policy
 * allows, `charge` (charge.ts) takes the call's cost from every bucket at once, atomically in the
 * store (shared by every instance on it): all or nothing. Over any limit, the call is refused
 * with `rate_limited` and a `retry_after` computed from the buckets; it consumes nothing.
 */
import type { LimitUsage } from "../core/types.ts";
import type { LimitStore } from "../store/types.ts";
import type { Metered } from "./charge.ts";
import type { LimitsConfig } from "./config.ts";
import { bucketKey, compile, type Limit, type MeteredCall, rounded } from "./limit.ts";

export { type Charged, charge, type Metered } from "./charge.ts";
export {
  type LimitConfig,
  type LimitsConfig,
  type LimitsConfigInput,
  limitConfigSchema,
  limitsConfigSchema,
  unknownLimitTools,
} from "./config.ts";
export { bucketKey, type Limit, type LimitKind, type MeteredCall } from "./limit.ts";

/** The limits of a call no limit applies to: one shared empty array. */
export const NO_LIMITS: readonly Limit[] = Object.freeze([]);

/** The configured limits as the decision stage reads them (`Gateway.limits`). */
export interface LimitMatcher {
  /** The limits that apply to a call of `subject` on `action`, in configuration order. */
  applicable(subject: MeteredCall["subject"], action: MeteredCall["action"]): readonly Limit[];
}

export class Limits implements LimitMatcher {
  readonly #all: readonly Limit[];
  /** Per action name: the limits that name it or name no tool, in configuration order. */
  readonly #byAction = new Map<string, readonly Limit[]>();

  constructor(config: LimitsConfig) {
    this.#all = config.map(compile);
  }

  /** The limits that apply to a call; the same empty array (nothing allocated) when none does. */
  applicable(subject: MeteredCall["subject"], action: MeteredCall["action"]): readonly Limit[] {
    if (this.#all.length === 0) return NO_LIMITS;
    const candidates = this.#candidates(action.name);
    if (candidates.length === 0) return NO_LIMITS;
    let applied: Limit[] | undefined;
    for (const limit of candidates) {
      if (limit.tenants !== undefined && !limit.tenants.has(subject.tenant)) continue;
      if (limit.subjects !== undefined && !limit.subjects.has(subject.id)) continue;
      if (limit.sideEffects !== undefined && !limit.sideEffects.has(action.side_effect)) continue;
      applied ??= [];
      applied.push(limit);
    }
    return applied ?? NO_LIMITS;
  }

  #candidates(action: string): readonly Limit[] {
    let found = this.#byAction.get(action);
    if (found === undefined) {
      const matching = this.#all.filter((l) => l.tools === undefined || l.tools.includes(action));
      found = matching.length === 0 ? NO_LIMITS : matching;
      // Action names come from contracts (a closed set), so this map stays small.
      this.#byAction.set(action, found);
    }
    return found;
  }
}

/** The buckets of `limits` for this call, and their usage now (one store read). */
export async function meter(
  store: Pick<LimitStore, "limitUsage">,
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
