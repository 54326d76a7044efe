/**
 * One worker thread of Code Mode's sandbox pool as the gateway's side sees it: the runs on it,
 * their CPU slices in shared memory, the watch that ends a run stuck in the engine by ending this
 * thread only, and the answers to the program's inner calls (sandbox.ts is the pool and the API).
 */
import { WritError } from "../core/errors.ts";
import { moduleWorker } from "../core/module-worker.ts";
import {
  fromSandbox,
  SLICE_BUDGET,
  SLICE_RUN,
  SLICE_SINCE,
  SLICE_SLOTS,
  type ToSandbox,
} from "./sandbox-protocol.ts";
import type { CallAnswer, ProgramOutcome, SandboxLimits, StopReason } from "./sandbox-types.ts";

const THREAD_STACK_MB = 64;
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
 * When a run ends, calls it started may still be in flight (a program need not await them):
 * the caller cancels or awaits them; calls still queued are not made.
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

/** A call the program started after its answer was built: refused, never made (its index counts). */
export type LateCall = (tool: string, argsJson: string, index: number) => void;

interface RunHooks {
  call: InnerCall;
  late: LateCall;
}

interface Active {
  limits: SandboxLimits;
  call: InnerCall;
  late: LateCall;
  settle: (outcome: ProgramOutcome) => void;
  fail: (error: Error) => void;
  /** The stop asked of the thread, and when: it names the outcome if the thread must be ended. */
  stopping?: { reason: StopReason; message: string; at: number };
}

/** The worker thread and the runs on it, as the gateway's side sees them. */
export class SandboxThread {
  private readonly worker;
  private readonly slices = new Int32Array(new SharedArrayBuffer(SLICE_SLOTS * Int32Array.BYTES_PER_ELEMENT));
  private readonly epoch = Date.now();
  private readonly runs = new Map<number, Active>();
  private readonly queries = new Map<number, (bytes: number) => void>();
  private nextId = 1;
  private readonly watchdog: NodeJS.Timeout;
  /** The thread was ended, or ended by itself: it runs nothing more. */
  ended = false;

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

  run(source: string, tools: readonly string[], limits: SandboxLimits, hooks: RunHooks) {
    const id = this.nextId++;
    const outcome = new Promise<ProgramOutcome>((settle, fail) => {
      this.runs.set(id, { limits, call: hooks.call, late: hooks.late, settle, fail });
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
      case "late_call":
        this.runs.get(message.id)?.late(message.tool, message.argsJson, message.index);
        return;
      case "done": {
        const active = this.runs.get(message.id);
        this.runs.delete(message.id);
        active?.settle(message.outcome);
        return;
      }
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
    const inEngineMs = now - (this.epoch + Atomics.load(this.slices, SLICE_SINCE));
    if (active !== undefined && inEngineMs > Atomics.load(this.slices, SLICE_BUDGET) + GRACE_MS) {
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
export function jsonSafe(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
