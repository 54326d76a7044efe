/**
 * The messages between the gateway's thread (`sandbox.ts`) and the sandbox's thread
 * (`sandbox-worker.ts`). Runs are numbered by the gateway's side; inner calls by the run.
 *
 * Besides messages, the threads share three integers: the run QuickJS is executing right now
 * (`SLICE_RUN`, 0: none), since when (`SLICE_SINCE`, ms after the shared epoch) and the CPU time
 * it had left then (`SLICE_BUDGET`), so the gateway's
 * side can see a run stuck in the engine's C code, where the interrupt handler is not consulted,
 * and end the thread.
 */
import { z } from "zod";

export const SLICE_RUN = 0;
export const SLICE_SINCE = 1;
/** The CPU time (ms) the running run had left when it entered the engine. */
export const SLICE_BUDGET = 2;
export const SLICE_SLOTS = 3;

const stopReason = z.enum([
  "cpu",
  "memory",
  "stack",
  "duration",
  "calls",
  "result_size",
  "run_stopped",
  "syntax",
]);

const limits = z.object({
  memoryBytes: z.number(),
  stackBytes: z.number(),
  cpuMs: z.number(),
  durationMs: z.number(),
  maxCalls: z.number(),
  maxConcurrentCalls: z.number(),
  maxResultBytes: z.number(),
  maxLogBytes: z.number(),
});

const callAnswer = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("value"), json: z.string() }),
  z.object({ kind: z.literal("error"), message: z.string(), detail: z.unknown().optional() }),
  z.object({ kind: z.literal("stop"), message: z.string(), detail: z.unknown().optional() }),
]);

const logs = z.array(z.string());
export const outcomeSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("returned"), value: z.unknown(), logs }),
  z.object({
    kind: z.literal("threw"),
    name: z.string(),
    message: z.string(),
    stack: z.string().optional(),
    logs,
  }),
  z.object({
    kind: z.literal("stopped"),
    reason: stopReason,
    message: z.string(),
    detail: z.unknown().optional(),
    logs,
  }),
]);

/** Gateway → sandbox thread. */
export const toSandbox = z.discriminatedUnion("type", [
  z.object({ type: z.literal("init"), slices: z.instanceof(SharedArrayBuffer), epoch: z.number() }),
  z.object({
    type: z.literal("run"),
    id: z.number(),
    source: z.string(),
    tools: z.array(z.string()),
    limits,
    clockMs: z.number(),
  }),
  z.object({ type: z.literal("answer"), id: z.number(), index: z.number(), answer: callAnswer }),
  z.object({
    type: z.literal("stop"),
    id: z.number(),
    reason: stopReason,
    message: z.string(),
    detail: z.unknown(),
  }),
  z.object({ type: z.literal("memory"), id: z.number() }),
]);
export type ToSandbox = z.infer<typeof toSandbox>;

/** Sandbox thread → gateway. */
export const fromSandbox = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("call"),
    id: z.number(),
    index: z.number(),
    tool: z.string(),
    argsJson: z.string(),
  }),
  /** A call the program started while its answer was built: refused, not made. */
  z.object({
    type: z.literal("late_call"),
    id: z.number(),
    index: z.number(),
    tool: z.string(),
    argsJson: z.string(),
  }),
  z.object({ type: z.literal("done"), id: z.number(), outcome: outcomeSchema }),
  /** The run could not be run (the engine failed outside the program): an internal error. */
  z.object({ type: z.literal("failed"), id: z.number(), message: z.string() }),
  z.object({ type: z.literal("memory"), id: z.number(), bytes: z.number() }),
]);
export type FromSandbox = z.infer<typeof fromSandbox>;
