/**
 * What the gateway's thread and a policy evaluator thread (`evaluator-worker.ts`) share: the
 * policy to load (the worker's `workerData`), and a few integers in shared memory through which
 * one evaluation at a time is handed over and answered without either thread's event loop (the
 * gateway's thread waits for the answer, at most the evaluation budget, with `Atomics.wait`).
 *
 * The input and the answer cross as UTF-8 JSON text in a shared buffer; a larger buffer, when an
 * input needs one, is sent on the port before the evaluation is handed over (the worker drains
 * the port first), as is the next revision's policy before a LOAD.
 */
import { z } from "zod";

/** The handover's state (slot STATE): the worker waits for REQUEST, the gateway for DONE or FAILED. */
export const IDLE = 0;
export const REQUEST = 1;
/** The answer (the SDK's result set as JSON) is in the buffer. */
export const DONE = 2;
/** The evaluation failed inside the module: its message is in the buffer. */
export const FAILED = 3;
/** Load the policy last sent on the port (the worker answers on its parent port, then goes IDLE). */
export const LOAD = 4;

export const STATE = 0;
/** Bytes of text in the buffer (the input's, then the answer's). */
export const LENGTH = 1;
/** 0 while the worker loads the policy, 1 once it evaluates, 2 when loading failed (its message in the buffer). */
export const READY = 2;
export const SLOTS = 3;

/** The first buffer's size; a larger input gets a larger one. */
export const INITIAL_BUFFER_BYTES = 64 * 1024;

/**
 * What the policy is loaded with besides its module: the custom builtins' modules (absolute
 * paths, imported by the evaluator thread: functions cannot cross threads) and what
 * `opa.runtime()` shows.
 */
const hostSchema = z.object({
  builtinModules: z.array(z.string()).optional(),
  runtime: z
    .object({ env: z.record(z.string(), z.string()), config: z.record(z.string(), z.unknown()) })
    .optional(),
});

const policySchema = z.discriminatedUnion("kind", [
  hostSchema.extend({
    kind: z.literal("compiled"),
    wasm: z.instanceof(Uint8Array),
    hostBuiltins: z.array(z.string()),
    data: z.record(z.string(), z.unknown()),
  }),
  hostSchema.extend({ kind: z.literal("bundle"), bytes: z.instanceof(Uint8Array) }),
]);

/** What an evaluator loads: a compiled module (with its host builtins and data), or a bundle. */
export type EvaluatorPolicy = (
  | { kind: "compiled"; wasm: Uint8Array; hostBuiltins: string[]; data: Record<string, unknown> }
  | { kind: "bundle"; bytes: Uint8Array }
) &
  z.infer<typeof hostSchema>;

export const workerDataSchema = z.object({
  control: z.instanceof(SharedArrayBuffer),
  buffer: z.instanceof(SharedArrayBuffer),
  port: z.custom<import("node:worker_threads").MessagePort>(
    (value) => typeof value === "object" && value !== null && "postMessage" in value,
  ),
  entrypoint: z.string(),
  policy: policySchema,
});

/** Sent on the port (either way): the shared buffer to use from now on. */
export const bufferMessageSchema = z.object({ buffer: z.instanceof(SharedArrayBuffer) });

/** What the worker reads from its port: a buffer, or the policy of the next LOAD. */
export const portMessageSchema = z.union([bufferMessageSchema, z.object({ policy: policySchema })]);
