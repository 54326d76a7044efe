/**
 * Code Mode's sandbox: runs a model's program (TypeScript or JavaScript, the body of an async
 * function) in QuickJS compiled to WebAssembly, with nothing of the host in reach but `tools`
 * (each call answered by the caller's `InnerCall`) and a bounded `console`. Memory, stack, CPU
 * time, wall time, inner calls, their concurrency and the result's size are limited; a limit
 * ends the run with a `stopped` outcome naming it.
 *
 * Programs run on a pool of worker threads (`sandbox-worker.ts`), one run per thread at a time
 * (threads are started as runs need them, up to the pool's size; further runs wait for one): their
 * CPU time never blocks the gateway's event loop nor another run, and a program stuck where
 * QuickJS does not consult its interrupt handler (a long sort or JSON.stringify in the engine's C
 * code, repeated) is ended from here by ending its own thread only. Every run gets a fresh
 * QuickJS runtime and context there, disposed when it ends, so no run sees another's globals.
 *
 * A tool call the program starts once its answer is being built (from a `toJSON` of the returned
 * value, or a getter of what it threw) is refused, never made, and reported through `lateCall`.
 */
import { availableParallelism } from "node:os";
import { type FieldError, WritError } from "../core/errors.ts";
import { INSTANCE_MEMORY_BYTES } from "./sandbox-instance.ts";
import { type InnerCall, jsonSafe, type LateCall, SandboxThread } from "./sandbox-thread.ts";
import type { ProgramOutcome, SandboxLimits } from "./sandbox-types.ts";

export { type InnerCall, type LateCall, StopRun } from "./sandbox-thread.ts";

export type { ProgramOutcome, SandboxLimits, StopReason } from "./sandbox-types.ts";

export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 512 * 1024,
  cpuMs: 1000,
  durationMs: 30_000,
  maxCalls: 50,
  maxConcurrentCalls: 4,
  maxResultBytes: 64 * 1024,
  maxLogBytes: 16 * 1024,
});

/**
 * The sandbox thread's stack. QuickJS counts its stack limit in WebAssembly's linear memory, but
 * its C frames also take the thread's native stack, more per counted byte: 3 to 4 times for
 * recursive calls, 21 to 32 times for the parser on nested parentheses (measured: 2 MiB of
 * QuickJS stack fits 64 MiB, 3 MiB does not). Node's main thread (about 1 MB) overflowed first at
 * 512 KiB, and 256 KiB for the parser.
 */
export interface RunProgramOptions {
  tools: readonly string[];
  call: InnerCall;
  limits?: Partial<SandboxLimits>;
  signal?: AbortSignal;
  /** Told of each call refused because the program started it while its answer was built. */
  lateCall?: LateCall;
  /** The threads to run on (default: the process's pool of `DEFAULT_SANDBOX_THREADS`). */
  pool?: SandboxPool;
}

/** Strips TypeScript (sucrase), wraps the program as the body of an async function, runs it. */
export async function runProgram(source: string, options: RunProgramOptions): Promise<ProgramOutcome> {
  const limits = checkedLimits({ ...DEFAULT_LIMITS, ...options.limits });
  const { signal } = options;
  const notBegun = (message: string): ProgramOutcome => ({
    kind: "stopped",
    reason: "run_stopped",
    message,
    logs: [],
  });
  if (signal?.aborted) return notBegun("the run was stopped before it began");
  const pool = options.pool ?? defaultPool();
  // The duration counts from here: waiting for a thread is part of the run's time.
  const deadline = Date.now() + limits.durationMs;
  const thread = await pool.acquire(deadline, signal);
  if (thread === undefined) {
    return signal?.aborted
      ? notBegun("the run was stopped before it began")
      : {
          kind: "stopped",
          reason: "duration",
          message: `every sandbox thread stayed busy for the run's ${limits.durationMs} ms: it never began`,
          logs: [],
        };
  }
  try {
    return await runOn(thread, source, options, limits, deadline);
  } finally {
    pool.release(thread);
  }
}

async function runOn(
  thread: SandboxThread,
  source: string,
  options: RunProgramOptions,
  limits: SandboxLimits,
  deadline: number,
): Promise<ProgramOutcome> {
  const { signal } = options;
  const left = Math.max(1, deadline - Date.now());
  const { id, outcome } = thread.run(
    source,
    options.tools,
    { ...limits, durationMs: left },
    {
      call: options.call,
      late: options.lateCall ?? (() => undefined),
    },
  );
  const timer = setTimeout(
    () => thread.stop(id, "duration", `the program ran longer than ${limits.durationMs} ms`),
    left,
  );
  const onAbort = () => {
    const reason: unknown = signal?.reason;
    thread.stop(
      id,
      "run_stopped",
      "the run was stopped",
      reason instanceof Error ? undefined : jsonSafe(reason),
    );
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await outcome;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * Each limit's largest value. QuickJS's stack limit must stay well inside the thread's stack (see
 * THREAD_STACK_MB: 1 MiB leaves it half free in the worst case measured) and the 5 MB stack
 * Emscripten gives the WebAssembly code (past it the stack runs over the heap); one run's memory
 * inside the instance's.
 */
export const MAX_LIMITS = {
  stackBytes: 1024 * 1024,
  memoryBytes: INSTANCE_MEMORY_BYTES,
} as const satisfies Partial<Record<keyof SandboxLimits, number>>;
const bounds: Readonly<Record<string, number>> = MAX_LIMITS;

/** Every limit a positive number within its bound (a mistake would leave a run without one). */
function checkedLimits(limits: SandboxLimits): SandboxLimits {
  const wrong: FieldError[] = [];
  for (const [name, value] of Object.entries(limits)) {
    const max = bounds[name];
    if (!(Number.isFinite(value) && value > 0 && (max === undefined || value <= max))) {
      const bound = max === undefined ? "" : ` up to ${max}`;
      wrong.push({ path: `/${name}`, message: `${String(value)} is not a positive number${bound}` });
    }
  }
  if (wrong.length === 0) return limits;
  throw new WritError(
    "invalid_argument",
    "the Code Mode sandbox's limits must be positive numbers within bounds",
    {
      suggestedFix: "give each limit as a positive number within its bound, or leave it out for its default",
      fieldErrors: wrong,
    },
  );
}

/**
 * The size of the default pool's WebAssembly memories in bytes, summed over its threads (0 before
 * the first run). Each grows to the largest demand of its runs and never shrinks (an idle
 * instance that grew large is replaced); steady across runs, it shows that runs free what they
 * allocate.
 */
export function sandboxMemoryBytes(): Promise<number> {
  return processPool === undefined ? Promise.resolve(0) : processPool.memoryBytes();
}

/** Ends the default pool's threads (their runs are stopped); the next run starts new ones. */
export async function closeSandbox(): Promise<void> {
  const pool = processPool;
  processPool = undefined;
  await pool?.close();
}

/** The default pool's size: a thread per core, at least 2 (so that one stuck run never holds all). */
export const DEFAULT_SANDBOX_THREADS = Math.min(8, Math.max(2, availableParallelism()));

let processPool: SandboxPool | undefined;

function defaultPool(): SandboxPool {
  processPool ??= new SandboxPool(DEFAULT_SANDBOX_THREADS);
  return processPool;
}

/**
 * Sandbox threads, one run on each at a time: a thread is started when a run finds none idle and
 * the pool is below its size; beyond that, runs wait in order for one to come free. A thread that
 * had to be ended (a stuck program, a fault) is dropped; the next run that needs one starts one.
 */
export class SandboxPool {
  readonly #idle: SandboxThread[] = [];
  readonly #busy = new Set<SandboxThread>();
  readonly #waiting: Array<(thread: SandboxThread | undefined) => void> = [];

  constructor(readonly size: number) {
    if (!Number.isSafeInteger(size) || size < 1) {
      throw new WritError("invalid_argument", `a sandbox pool needs at least one thread, got ${size}`, {
        suggestedFix: "give code_mode.sandbox_threads as a positive integer",
      });
    }
  }

  /**
   * A thread of its own for one run, once one is free: undefined when `deadline` (ms since the
   * epoch) passed or `signal` aborted first.
   */
  acquire(deadline: number, signal?: AbortSignal): Promise<SandboxThread | undefined> {
    const idle = this.#idle.pop();
    if (idle !== undefined) return Promise.resolve(this.#lend(idle));
    if (this.#busy.size < this.size) return Promise.resolve(this.#lend(this.#start()));
    return new Promise((resolve) => {
      const done = (thread: SandboxThread | undefined) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", abandon);
        resolve(thread);
      };
      const abandon = () => {
        const at = this.#waiting.indexOf(done);
        if (at >= 0) this.#waiting.splice(at, 1);
        done(undefined);
      };
      const timer = setTimeout(abandon, Math.max(0, deadline - Date.now()));
      signal?.addEventListener("abort", abandon, { once: true });
      this.#waiting.push(done);
    });
  }

  /** Gives the thread back after its run (to the next waiting run, else to the idle ones). */
  release(thread: SandboxThread): void {
    this.#busy.delete(thread);
    const next = this.#waiting.shift();
    if (next === undefined) {
      if (!thread.ended) this.#idle.push(thread);
      return;
    }
    next(this.#lend(thread.ended ? this.#start() : thread));
  }

  /** The WebAssembly memory of every thread, summed. */
  async memoryBytes(): Promise<number> {
    const sizes = await Promise.all([...this.#idle, ...this.#busy].map((thread) => thread.memoryBytes()));
    return sizes.reduce((sum, bytes) => sum + bytes, 0);
  }

  /** Ends every thread (their runs are stopped) and every wait. */
  async close(): Promise<void> {
    const threads = [...this.#idle, ...this.#busy];
    this.#idle.length = 0;
    this.#busy.clear();
    for (const waiting of this.#waiting.splice(0)) waiting(undefined);
    await Promise.all(threads.map((thread) => thread.end()));
  }

  #lend(thread: SandboxThread): SandboxThread {
    this.#busy.add(thread);
    return thread;
  }

  #start(): SandboxThread {
    const thread = new SandboxThread(() => {
      // Ended (stuck, faulted, lost): an idle one is dropped; a busy one is released by its run.
      const at = this.#idle.indexOf(thread);
      if (at >= 0) this.#idle.splice(at, 1);
    });
    return thread;
  }
}
