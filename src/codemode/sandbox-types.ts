/** The sandbox's public types (re-exported by `sandbox.ts`), shared with the QuickJS engine. */

export interface SandboxLimits {
  /** QuickJS heap limit. */
  memoryBytes: number;
  /** QuickJS stack limit (the engine's own count; see `DEFAULT_LIMITS`). */
  stackBytes: number;
  /** CPU time spent running the program's own code, summed over the run (not while it waits). */
  cpuMs: number;
  /** Wall time of the whole run, including inner calls. */
  durationMs: number;
  /** Inner tool calls per run; the call past this stops the run and is not made. */
  maxCalls: number;
  /** Inner calls in flight at once; more wait, in order. */
  maxConcurrentCalls: number;
  /** The return value's JSON size in bytes (UTF-8). */
  maxResultBytes: number;
  /** `console` output kept, in bytes; truncated beyond. */
  maxLogBytes: number;
}

export type StopReason =
  | "cpu"
  | "memory"
  | "stack"
  | "duration"
  | "calls"
  | "result_size"
  | "run_stopped"
  | "syntax";

export type ProgramOutcome =
  | { kind: "returned"; value: unknown; logs: string[] }
  | { kind: "threw"; name: string; message: string; stack?: string; logs: string[] }
  | { kind: "stopped"; reason: StopReason; message: string; detail?: unknown; logs: string[] };

/** What the host answers to one inner call, as the engine passes it into the program. */
export type CallAnswer =
  /** The value as JSON text. */
  | { kind: "value"; json: string }
  /** Thrown into the program as a `ToolError` with this message and `detail`. */
  | { kind: "error"; message: string; detail?: unknown }
  /** Ends the run: outcome `stopped`, reason `run_stopped`, with this message and detail. */
  | { kind: "stop"; message: string; detail?: unknown };
