/**
 * The `code_mode:` section of the gateway config: whether `run_code` is offered, and the limits of
 * each run (the sandbox's own defaults apply to the limits left out; see README "Code Mode").
 */
import { z } from "zod";
import { MAX_LIMITS } from "./sandbox.ts";

const positive = z.number().int().positive();

export const codeModeConfigSchema = z
  .object({
    /** Offer `POST /v1/run_code`, `GET /v1/run_code/sdk` and the MCP tool `run_code` (the policy still decides who may use them). */
    enabled: z.boolean().default(true),
    /**
     * Programs one caller (tenant and subject) may run at once, on this instance; one more is
     * refused rate_limited with retry_after, its code.run entry saying so.
     */
    max_concurrent_runs: positive.default(2),
    /**
     * Sandbox threads, one run on each at a time (more runs wait for one): a thread per core by
     * default (at most 8), and always more than `max_concurrent_runs`, so that one caller's runs
     * never hold them all. A program stuck in the engine ends its own thread only.
     */
    sandbox_threads: positive.max(64).optional(),
    /** Largest program accepted, in bytes (UTF-8). */
    max_code_bytes: positive.max(1024 * 1024).default(64 * 1024),
    /** The sandbox's heap (default 32 MiB; at most what its WebAssembly memory holds). */
    memory_bytes: positive.max(MAX_LIMITS.memoryBytes).optional(),
    /** The sandbox's stack (default 512 KiB; at most what its thread's stack holds). */
    stack_bytes: positive.max(MAX_LIMITS.stackBytes).optional(),
    /** CPU time the program's own code may use, on the sandbox's worker thread (default 1000). */
    cpu_ms: positive.optional(),
    /** Wall time of a whole run, inner calls included (default 30000). */
    duration_ms: positive.optional(),
    /** Inner tool calls per run (default 50). */
    max_calls: positive.optional(),
    /** Inner calls in flight at once (default 4). */
    max_concurrent_calls: positive.optional(),
    /** The return value's JSON size (default 64 KiB). */
    max_result_bytes: positive.optional(),
    /** console output kept (default 16 KiB). */
    max_log_bytes: positive.optional(),
  })
  .strict()
  .superRefine((config, ctx) => {
    // A caller at its cap must leave a thread for everyone else, or its spinning programs hold all.
    if (config.sandbox_threads !== undefined && config.sandbox_threads <= config.max_concurrent_runs) {
      ctx.addIssue({
        code: "custom",
        path: ["sandbox_threads"],
        message: `sandbox_threads (${config.sandbox_threads}) must be more than max_concurrent_runs (${config.max_concurrent_runs}): one caller's runs would take every thread; raise sandbox_threads or lower max_concurrent_runs`,
      });
    }
  });

export type CodeModeConfig = z.output<typeof codeModeConfigSchema>;
