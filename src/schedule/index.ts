/**
 * Scheduling by side effect (src/pipeline/schedule.ts orders a proposal's calls) and concurrency
 * groups (`groups.ts`, entered at dispatch): the gateway's part that holds their bounds.
 */
import { type SchedulingConfig, schedulingConfigSchema } from "./config.ts";
import { ConcurrencyGroups } from "./groups.ts";
import { ResourceTurns } from "./resource-turns.ts";

export { type SchedulingConfig, schedulingConfigSchema } from "./config.ts";
export { ConcurrencyGroups, type GroupTurn } from "./groups.ts";
export { ResourceTurns } from "./resource-turns.ts";

export interface Scheduling {
  /** Read-only calls of one proposal that run at the same time. */
  maxConcurrentReads: number;
  groups: ConcurrencyGroups;
  /** Calls decided and run at once on an in-process backend take turns per resource. */
  resources: ResourceTurns;
}

/** What scheduling needs of a gateway (structural: core/gateway.ts names Scheduling). */
type SchedulingParts = Pick<ConstructorParameters<typeof ConcurrencyGroups>[0], "store" | "metrics">;

export function createScheduling(config: SchedulingConfig, parts: SchedulingParts): Scheduling {
  return {
    maxConcurrentReads: config.max_concurrent_reads,
    groups: new ConcurrencyGroups({
      store: parts.store,
      metrics: parts.metrics,
      maxWaitMs: config.group_max_wait_ms,
      leaseMs: config.group_lease_ms,
    }),
    resources: new ResourceTurns(),
  };
}

/** The scheduling of gateways assembled without one (tests, benchmarks): the defaults, one per gateway. */
const defaults = new WeakMap<object, Scheduling>();

export function schedulingOf(
  gw: SchedulingParts & { readonly scheduling?: Scheduling | undefined },
): Scheduling {
  if (gw.scheduling !== undefined) return gw.scheduling;
  let scheduling = defaults.get(gw);
  if (scheduling === undefined) {
    scheduling = createScheduling(schedulingConfigSchema.parse({}), gw);
    defaults.set(gw, scheduling);
  }
  return scheduling;
}
