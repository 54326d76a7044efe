/**
 * `scheduling` in the gateway configuration: how many read-only calls of one proposal run at
 * once, and the bounds of concurrency groups (how long a call waits for its group, and the lease
 * a committing call holds in the store while it runs).
 */
import { z } from "zod";

export const schedulingConfigSchema = z
  .object({
    /** Read-only calls (`side_effect: none`) of one proposal that run at the same time. */
    max_concurrent_reads: z.number().int().min(1).max(64).default(4),
    /**
     * The longest a call waits for its `concurrency_group` (never longer than its contract's
     * `timeout_ms` either); past it the call fails with a retryable `conflict`.
     */
    group_max_wait_ms: z.number().int().positive().default(30_000),
    /**
     * The lease a committing call of a group holds in the store, renewed every third of it while
     * the call runs: an instance that crashed holding one blocks its group this long at most.
     */
    group_lease_ms: z.number().int().min(300).default(15_000),
  })
  .strict();

export type SchedulingConfig = z.output<typeof schedulingConfigSchema>;
