/**
 * Code Mode's sandbox: runs a model's program (TypeScript or JavaScript, the body of an async
 * function) in QuickJS compiled to WebAssembly, with nothing of the host in reach but `tools`
 * (each call answered by the caller's `InnerCall`) and a bounded `console`. Memory, stack, CPU
 * time, wall time, inner calls, their concurrency and the result's size are limited; a limit
 * ends the run with a `stopped` outcome naming it.
 *
 * Programs run on one worker thread (`sandbox-worker.ts`, started on the first run): their CPU
 * time never blocks the gateway's event loop, and a program stuck where QuickJS does not consult
 * its interrupt handler (a long sort or JSON.stringify in the engine's C code, repeated) is ended
 * from here by ending the thread. Every run gets a fresh QuickJS runtime and context there,
 * disposed when it ends, so no run sees another's globals.
 */
import { WritError } from "../core/errors.ts";
import { moduleWorker } from "../core/module-worker.ts";
import { fromSandbox, SLICE_RUN, SLICE_SINCE, SLICE_SLOTS, type ToSandbox } from "./sandbox-protocol.ts";
import type { CallAnswer, ProgramOutcome, SandboxLimits, StopReason } from "./sandbox-types.ts";

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
 * its C frames also take the thread's native stack, several times more per JavaScript call; on
 * Node's main thread (about 1 MB) 512 KiB of QuickJS stack overflowed the host first.
 */
const THREAD_STACK_MB = 32;
/** How often the gateway's side looks for a run stuck in the engine. */
const WATCH_MS = 25;
/** How long past its CPU limit a run may stay in the engine before its thread is ended. */
const GRACE_MS = 250;
/** How long a run may take to answer a stop before its thread is ended. */
const STOP_TIMEOUT_MS = 5000;

/**
 * The host side of one inner call. Resolves with the JSON value the program receives; rejects
 * with `StopRun` to end the run at once (e.g. a denied inner call), or any Error to throw into
 * the program (its message, and its `detail` or a WritError's body as the error's `detail`).
 */
export type InnerCall = (tool: string, args: unknown, index: number) => Promise<unknown>;

/** Rejected by an `InnerCall` to end the run; `detail` is carried to the outcome. */
export class StopRun extends Error {
  constructor(
    readonly detail: unknown,
    message = "the gateway stopped the run",
  ) {
    super(message);
    this.name = "StopRun";
  }
}

export interface RunProgramOptions {
  tools: readonly string[];
  call: InnerCall;
  limits?: Partial<SandboxLimits>;
  signal?: AbortSignal;
}

/** Strips TypeScript (sucrase), wraps the program as the body of an async function, runs it. */
export async function runProgram(source: string, options: RunProgramOptions): Promise<ProgramOutcome> {
  const limits: SandboxLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const { signal } = options;
  if (signal?.aborted) {
    return {
      kind: "stopped",
      reason: "run_stopped",
      message: "the run was stopped before it began",
      logs: [],
    };
  }
  const thread = sandboxThread();
  const { id, outcome } = thread.run(source, options.tools, limits, options.call);
  const timer = setTimeout(
    () => thread.stop(id, "duration", `the program ran longer than ${limits.durationMs} ms`),
    limits.durationMs,
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
 * The size of the sandbox's WebAssembly memory in bytes (0 before the first run). It grows to
 * the largest demand of the runs at one time and never shrinks (an idle instance that grew large
 * is replaced); steady across runs, it shows that runs free what they allocate.
 */
export function sandboxMemoryBytes(): Promise<number> {
  return current === undefined ? Promise.resolve(0) : current.memoryBytes();
}

/** Ends the sandbox's thread (the runs on it are stopped); the next run starts a new one. */
export async function closeSandbox(): Promise<void> {
  const thread = current;
  current = undefined;
  await thread?.end();
}

let current: SandboxThread | undefined;

function sandboxThread(): SandboxThread {
  current ??= new SandboxThread(() => {
    current = undefined;
  });
  return current;
}

interface Active {
  limits: SandboxLimits;
  call: InnerCall;
  settle: (outcome: ProgramOutcome) => void;
  fail: (error: Error) => void;
  /** The stop asked of the thread, and when: it names the outcome if the thread must be ended. */
  stopping?: { reason: StopReason; message: string; at: number };
}

/** The worker thread and the runs on it, as the gateway's side sees them. */
class SandboxThread {
  private readonly worker;
  private readonly slices = new Int32Array(new SharedArrayBuffer(SLICE_SLOTS * Int32Array.BYTES_PER_ELEMENT));
  private readonly epoch = Date.now();
  private readonly runs = new Map<number, Active>();
  private readonly queries = new Map<number, (bytes: number) => void>();
  private nextId = 1;
  private readonly watchdog: NodeJS.Timeout;
  private ended = false;

  constructor(private readonly onEnd: () => void) {
    const extension = import.meta.url.endsWith(".ts") ? "ts" : "js";
    this.worker = moduleWorker(new URL(`./sandbox-worker.${extension}`, import.meta.url), {
      stackSizeMb: THREAD_STACK_MB,
    });
    // Runs keep the process alive through their duration timers, not through the thread.
    this.worker.unref();
    this.worker.on("message", (raw: unknown) => this.receive(raw));
    this.worker.on("error", (error) => this.lost(`the sandbox thread failed: ${error.message}`));
    this.worker.on("exit", () => this.lost("the sandbox thread exited"));
    this.watchdog = setInterval(() => this.watch(), WATCH_MS);
    this.watchdog.unref();
    this.post({ type: "init", slices: this.slices.buffer, epoch: this.epoch });
  }

  run(source: string, tools: readonly string[], limits: SandboxLimits, call: InnerCall) {
    const id = this.nextId++;
    const outcome = new Promise<ProgramOutcome>((settle, fail) => {
      this.runs.set(id, { limits, call, settle, fail });
    });
    this.post({ type: "run", id, source, tools: [...tools], limits, clockMs: Date.now() });
    return { id, outcome };
  }

  stop(id: number, reason: StopReason, message: string, detail?: unknown): void {
    const active = this.runs.get(id);
    if (active === undefined || active.stopping !== undefined) return;
    active.stopping = { reason, message, at: Date.now() };
    this.post({ type: "stop", id, reason, message, detail });
  }

  memoryBytes(): Promise<number> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.queries.set(id, resolve);
      this.post({ type: "memory", id });
    });
  }

  /** Ends the thread; its runs are stopped, `culprit` with `stop`, the others as collateral. */
  async end(culprit?: number, stop?: { reason: StopReason; message: string }): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.onEnd();
    clearInterval(this.watchdog);
    for (const [id, active] of this.runs) {
      active.settle(
        id === culprit && stop !== undefined
          ? { kind: "stopped", reason: stop.reason, message: stop.message, logs: [] }
          : {
              kind: "stopped",
              reason: "run_stopped",
              message:
                "the sandbox's thread was ended under this run (another program overran it); run it again",
              logs: [],
            },
      );
    }
    this.runs.clear();
    for (const resolve of this.queries.values()) resolve(0);
    this.queries.clear();
    await this.worker.terminate();
  }

  private post(message: ToSandbox): void {
    this.worker.postMessage(message);
  }

  private receive(raw: unknown): void {
    const parsed = fromSandbox.safeParse(raw);
    if (!parsed.success) return;
    const message = parsed.data;
    switch (message.type) {
      case "call": {
        const active = this.runs.get(message.id);
        if (active === undefined) return;
        void answer(active.call, message.tool, message.argsJson, message.index).then((settled) => {
          if (this.runs.has(message.id))
            this.post({ type: "answer", id: message.id, index: message.index, answer: settled });
        });
        return;
      }
      case "done":
        this.runs.get(message.id)?.settle(message.outcome);
        this.runs.delete(message.id);
        return;
      case "failed":
        this.runs.get(message.id)?.fail(internal(new Error(message.message)));
        this.runs.delete(message.id);
        return;
      case "memory":
        this.queries.get(message.id)?.(message.bytes);
        this.queries.delete(message.id);
        return;
    }
  }

  /** A run in the engine past its CPU limit, or not answering a stop, ends the thread. */
  private watch(): void {
    if (this.runs.size === 0) return;
    const now = Date.now();
    const running = Atomics.load(this.slices, SLICE_RUN);
    const active = running === 0 ? undefined : this.runs.get(running);
    if (
      active !== undefined &&
      now - (this.epoch + Atomics.load(this.slices, SLICE_SINCE)) > active.limits.cpuMs + GRACE_MS
    ) {
      void this.end(running, {
        reason: "cpu",
        message: `the program used more than ${active.limits.cpuMs} ms of CPU time`,
      });
      return;
    }
    for (const [id, { stopping }] of this.runs) {
      if (stopping !== undefined && now - stopping.at > STOP_TIMEOUT_MS) {
        void this.end(id, stopping);
        return;
      }
    }
  }

  /** The thread ended by itself: its runs fail, the next run starts a new one. */
  private lost(message: string): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd();
    clearInterval(this.watchdog);
    for (const active of this.runs.values()) active.fail(internal(new Error(message)));
    this.runs.clear();
    for (const resolve of this.queries.values()) resolve(0);
    this.queries.clear();
  }
}

function internal(cause: Error): WritError {
  return new WritError("internal", "the Code Mode sandbox failed while running the program", {
    suggestedFix: "run the program again; if it persists, report it to the operator",
    cause,
  });
}

/** An inner call's settlement as the engine passes it into the program. */
async function answer(call: InnerCall, tool: string, argsJson: string, index: number): Promise<CallAnswer> {
  try {
    const args: unknown = JSON.parse(argsJson);
    const value = await call(tool, args, index);
    return { kind: "value", json: JSON.stringify(value) ?? "null" };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof StopRun) return withDetail({ kind: "stop", message }, jsonSafe(error.detail));
    return withDetail({ kind: "error", message }, jsonSafe(detailOf(error)));
  }
}

function withDetail<T extends CallAnswer>(answer: T, detail: unknown): T {
  return detail === undefined ? answer : { ...answer, detail };
}

function detailOf(error: unknown): unknown {
  if (error instanceof WritError) return error.toJSON();
  if (typeof error === "object" && error !== null && "detail" in error) return error.detail;
  return undefined;
}

/** The value as JSON would carry it, or undefined when it is not JSON (a cycle, a BigInt). */
function jsonSafe(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
