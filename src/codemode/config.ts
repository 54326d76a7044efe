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
  .strict();

export type CodeModeConfig = z.output<typeof codeModeConfigSchema>;
