/**
 * One program run inside QuickJS: a fresh runtime and context, the prelude, the program, and the
 * loop that runs QuickJS's pending jobs whenever an inner call settles, until the program's
 * promise settles or a limit stops it. Everything created here is disposed when the run ends,
 * whatever ends it, unless the WebAssembly instance itself faulted (then nothing in it is touched
 * again: the caller drops the instance).
 */
import type {
  QuickJSContext,
  QuickJSDeferredPromise,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from "quickjs-emscripten-core";
import { z } from "zod";
import { EngineFault, type EngineRun, type EngineRunOptions } from "./sandbox-engine.ts";
import { PRELUDE, PRELUDE_FILE } from "./sandbox-prelude.ts";
import type { CallAnswer, ProgramOutcome, SandboxLimits, StopReason } from "./sandbox-types.ts";

export { EngineFault, type EngineRun, type EngineRunOptions, type RunHost } from "./sandbox-engine.ts";

import { describeSyntaxError, PROGRAM_FILE, programLocation } from "./transpile.ts";

export function startEngineRun(module: QuickJSWASMModule, options: EngineRunOptions): EngineRun {
  const run = new Run(module, options);
  return {
    outcome: run.start(),
    stop: (reason, message, detail) => run.stop(reason, message, detail),
    abandon: (message) => run.abandon(message),
  };
}

/**
 * How often, in the program's CPU time, the heap is measured. QuickJS checks its memory limit
 * against its own count of allocations, which in this WebAssembly build (no malloc_usable_size)
 * adds 8 bytes per block whatever its size: a limit on block count, not bytes. So the run also
 * measures what its objects hold, now and then and whenever the instance's memory grew.
 */
const HEAP_CHECK_MS = 50;
const MEMORY_USED = /^memory used\s+\d+\s+(\d+)/m;

const describedSchema = z.object({ name: z.string(), message: z.string(), stack: z.string().optional() });

const LOG_PREFIX: Record<string, string> = { warn: "warn: ", error: "error: " };

class Run {
  private readonly limits: SandboxLimits;
  private readonly logs: string[] = [];
  private logBytes = 0;
  private logTruncated = false;
  private cpuUsedMs = 0;
  private sliceStart: number | undefined;
  private readonly deadline: number;
  private stopped: { reason: StopReason; message: string; detail?: unknown } | undefined;
  private faulted = false;
  private abandoned = false;
  private finished = false;
  /**
   * The program's answer is being built (its return value serialized, what it threw read): code
   * it runs then (a `toJSON`, a getter) may call no tool, since the run's outcome is decided.
   */
  private answering = false;
  private calls = 0;
  private inFlight = 0;
  private readonly queue: (() => void)[] = [];
  private readonly deferreds = new Set<QuickJSDeferredPromise>();
  private readonly handles: QuickJSHandle[] = [];
  private wake: () => void = () => {};
  private runtime: QuickJSRuntime | undefined;
  private heapCheckedAtMs = 0;
  private wasmBytesAtCheck = 0;

  constructor(
    private readonly module: QuickJSWASMModule,
    private readonly options: EngineRunOptions,
  ) {
    this.limits = options.limits;
    this.deadline = performance.now() + options.limits.durationMs;
  }

  stop(reason: StopReason, message: string, detail?: unknown): void {
    if (this.stopped !== undefined || this.finished) return;
    this.stopped = detail === undefined ? { reason, message } : { reason, message, detail };
    this.queue.length = 0;
    this.wake();
  }

  abandon(message: string): void {
    this.abandoned = true;
    this.faulted = true;
    this.stop("run_stopped", message);
  }

  async start(): Promise<ProgramOutcome> {
    const runtime = this.module.newRuntime();
    this.runtime = runtime;
    this.wasmBytesAtCheck = this.wasmBytes();
    let context: QuickJSContext | undefined;
    try {
      runtime.setMemoryLimit(this.limits.memoryBytes);
      runtime.setMaxStackSize(this.limits.stackBytes);
      runtime.setInterruptHandler(() => this.shouldInterrupt());
      runtime.setModuleLoader(() => ({
        error: new Error("modules cannot be imported in Code Mode: a program has `tools` and `console` only"),
      }));
      context = runtime.newContext();
      return await this.drive(runtime, context);
    } catch (error) {
      if (this.abandoned) return this.stoppedOutcome();
      if (this.faulted) throw new EngineFault(error);
      throw error;
    } finally {
      this.finished = true;
      if (!this.faulted) this.dispose(runtime, context);
    }
  }

  /**
   * Frees everything the run created. QuickJS asserts that a runtime it frees holds no objects,
   * so a handle left behind aborts here: that is a fault of the instance, like a trap.
   */
  private dispose(runtime: QuickJSRuntime, context: QuickJSContext | undefined): void {
    try {
      for (const deferred of this.deferreds) deferred.dispose();
      for (const handle of this.handles) if (handle.alive) handle.dispose();
      context?.dispose();
      runtime.dispose();
    } catch (error) {
      this.faulted = true;
      throw new EngineFault(error);
    }
  }

  private async drive(runtime: QuickJSRuntime, context: QuickJSContext): Promise<ProgramOutcome> {
    const prelude = this.evaluate(context, PRELUDE, PRELUDE_FILE);
    if ("outcome" in prelude) return prelude.outcome;
    const hostCall = this.keep(
      context.newFunction("hostCall", (tool, args) => this.hostCall(context, tool, args)),
    );
    const hostLog = this.keep(
      context.newFunction("hostLog", (level, line) => this.hostLog(context, level, line)),
    );
    const toolNames = this.keep(context.newString(JSON.stringify(this.options.tools)));
    const clock = this.keep(context.newNumber(this.options.clockMs));
    const setup = this.slice(() =>
      context.callFunction(prelude.handle, context.undefined, hostCall, hostLog, toolNames, clock),
    );
    if (setup.error !== undefined) return this.failed(context, this.keep(setup.error), "setup");
    const helpers = this.keep(setup.value);
    const finish = this.keep(context.getProp(helpers, "finish"));
    const describe = this.keep(context.getProp(helpers, "describe"));

    const program = this.evaluate(context, this.options.code, PROGRAM_FILE, describe);
    if ("outcome" in program) return program.outcome;
    const called = this.slice(() => context.callFunction(program.handle, context.undefined));
    if (called.error !== undefined) return this.failed(context, this.keep(called.error), "run", describe);
    const promise = this.keep(called.value);

    for (;;) {
      const jobs = this.slice(() => runtime.executePendingJobs());
      if (jobs.error !== undefined) {
        const error = this.keep(jobs.error);
        if (this.stopped === undefined) return this.failed(context, error, "run", describe);
      }
      if (this.stopped !== undefined) return this.stoppedOutcome();
      const state = context.getPromiseState(promise);
      if (state.type === "fulfilled") return this.returned(context, this.keep(state.value), finish, describe);
      if (state.type === "rejected") return this.failed(context, this.keep(state.error), "run", describe);
      if (this.inFlight === 0 && this.queue.length === 0 && !runtime.hasPendingJob()) {
        this.stop("duration", "the program is waiting for a promise that nothing will settle");
        return this.stoppedOutcome();
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  /** Evaluates a script whose value is a function; a syntax error stops the run. */
  private evaluate(
    context: QuickJSContext,
    code: string,
    file: string,
    describe?: QuickJSHandle,
  ): { handle: QuickJSHandle } | { outcome: ProgramOutcome } {
    const result = this.slice(() => context.evalCode(code, file, { type: "global", strict: true }));
    if (result.error === undefined) return { handle: this.keep(result.value) };
    return { outcome: this.failed(context, this.keep(result.error), "compile", describe) };
  }

  /** Runs QuickJS synchronously, counting the time against the CPU limit. */
  private slice<T>(enter: () => T): T {
    if (this.faulted) throw new EngineFault("the instance was abandoned");
    this.sliceStart = performance.now();
    this.options.onSlice?.(true, this.limits.cpuMs - this.cpuUsedMs);
    try {
      return enter();
    } catch (error) {
      // The engine returns QuickJS's own exceptions as values; a throw is the host's (its stack
      // overflowing inside WebAssembly, a trap): the instance may be half-way through anything.
      this.faulted = true;
      throw error;
    } finally {
      this.options.onSlice?.(false, 0);
      this.cpuUsedMs += performance.now() - this.sliceStart;
      this.sliceStart = undefined;
    }
  }

  private shouldInterrupt(): boolean {
    if (this.stopped !== undefined) return true;
    const now = performance.now();
    const cpuMs = this.cpuUsedMs + (this.sliceStart === undefined ? 0 : now - this.sliceStart);
    if (cpuMs > this.limits.cpuMs) {
      this.stop("cpu", `the program used more than ${this.limits.cpuMs} ms of CPU time`);
      return true;
    }
    const wasmBytes = this.wasmBytes();
    if (
      cpuMs - this.heapCheckedAtMs >= HEAP_CHECK_MS ||
      wasmBytes - this.wasmBytesAtCheck >= this.limits.memoryBytes / 4
    ) {
      this.heapCheckedAtMs = cpuMs;
      this.wasmBytesAtCheck = wasmBytes;
      const used = this.heapBytes();
      if (used !== undefined && used > this.limits.memoryBytes) {
        this.stop(
          "memory",
          `the program used more than ${this.limits.memoryBytes} bytes of memory (${used})`,
        );
        return true;
      }
    }
    if (now >= this.deadline) {
      this.stop("duration", `the program ran longer than ${this.limits.durationMs} ms`);
      return true;
    }
    return false;
  }

  private wasmBytes(): number {
    return this.module.getWasmMemory().buffer.byteLength;
  }

  /** What the run's objects, strings and buffers hold, by QuickJS's own walk of its heap. */
  private heapBytes(): number | undefined {
    const dump = this.runtime?.dumpMemoryUsage();
    const used = dump === undefined ? null : MEMORY_USED.exec(dump);
    return used === null ? undefined : Number(used[1]);
  }

  private hostCall(
    context: QuickJSContext,
    toolHandle: QuickJSHandle,
    argsHandle: QuickJSHandle,
  ): QuickJSHandle {
    const tool = context.getString(toolHandle);
    const argsJson = context.getString(argsHandle);
    const deferred = context.newPromise();
    this.deferreds.add(deferred);
    if (this.stopped !== undefined) return deferred.handle;
    const index = this.calls++;
    if (this.answering || this.finished) {
      this.options.host.late(tool, argsJson, index);
      return deferred.handle;
    }
    if (index >= this.limits.maxCalls) {
      this.stop(
        "calls",
        `the program made more than ${this.limits.maxCalls} tool calls; call ${index + 1} (tools.${tool}) was not made`,
      );
      return deferred.handle;
    }
    const begin = () => {
      this.options.host.call(tool, argsJson, index).then(
        (answer) => this.settle(context, deferred, answer),
        (error: unknown) =>
          this.settle(context, deferred, {
            kind: "error",
            message: error instanceof Error ? error.message : String(error),
          }),
      );
    };
    // Started after this slice: the host's own work is not the program's CPU time.
    if (this.inFlight < this.limits.maxConcurrentCalls) {
      this.inFlight += 1;
      queueMicrotask(begin);
    } else {
      this.queue.push(begin);
    }
    return deferred.handle;
  }

  private settle(context: QuickJSContext, deferred: QuickJSDeferredPromise, answer: CallAnswer): void {
    this.inFlight -= 1;
    if (this.finished || this.stopped !== undefined) return;
    const next = this.queue.shift();
    if (next !== undefined) {
      this.inFlight += 1;
      next();
    }
    if (answer.kind === "stop") {
      this.stop("run_stopped", answer.message, answer.detail);
      return;
    }
    const envelope =
      answer.kind === "value"
        ? `{"ok":true,"value":${answer.json}}`
        : JSON.stringify({ ok: false, message: answer.message, detail: answer.detail });
    if (envelope.length > this.limits.memoryBytes) {
      this.stop(
        "memory",
        `an inner call's result (${envelope.length} bytes) does not fit the sandbox's memory`,
      );
      return;
    }
    this.slice(() => {
      const text = context.newString(envelope);
      try {
        deferred.resolve(text);
      } finally {
        text.dispose();
      }
    });
    this.deferreds.delete(deferred);
    this.wake();
  }

  private hostLog(context: QuickJSContext, levelHandle: QuickJSHandle, lineHandle: QuickJSHandle): void {
    if (this.logTruncated) return;
    const level = context.getString(levelHandle);
    const line = (LOG_PREFIX[level] ?? "") + context.getString(lineHandle);
    const room = this.limits.maxLogBytes - this.logBytes;
    const bytes = Buffer.byteLength(line);
    if (bytes <= room) {
      this.logs.push(line);
      this.logBytes += bytes;
      return;
    }
    this.logTruncated = true;
    const kept = Buffer.from(line)
      .subarray(0, room)
      .toString()
      .replace(/\uFFFD$/, "");
    if (kept.length > 0) this.logs.push(kept);
    this.logs.push(`[log truncated: the program logged more than ${this.limits.maxLogBytes} bytes]`);
  }

  private returned(
    context: QuickJSContext,
    value: QuickJSHandle,
    finish: QuickJSHandle,
    describe: QuickJSHandle,
  ): ProgramOutcome {
    this.answering = true;
    const serialized = this.slice(() => context.callFunction(finish, context.undefined, value));
    if (this.stopped !== undefined) return this.stoppedOutcome();
    if (serialized.error !== undefined)
      return this.failed(context, this.keep(serialized.error), "run", describe);
    const text = context.getString(this.keep(serialized.value));
    const bytes = Buffer.byteLength(text);
    if (bytes > this.limits.maxResultBytes) {
      this.stop(
        "result_size",
        `the program's return value is ${bytes} bytes of JSON; the limit is ${this.limits.maxResultBytes}`,
      );
      return this.stoppedOutcome();
    }
    const parsed: unknown = JSON.parse(text);
    return { kind: "returned", value: parsed, logs: this.logs };
  }

  /** An exception out of QuickJS: a limit (interrupt, memory, stack), a syntax error, or a throw. */
  private failed(
    context: QuickJSContext,
    error: QuickJSHandle,
    phase: "setup" | "compile" | "run",
    describe?: QuickJSHandle,
  ): ProgramOutcome {
    if (this.stopped !== undefined) return this.stoppedOutcome();
    const thrown = this.read(context, error, describe);
    if (thrown.name === "InternalError" && thrown.message === "out of memory") {
      this.stop("memory", `the program ran out of memory (${this.limits.memoryBytes} bytes a run)`);
      return this.stoppedOutcome();
    }
    // The parser reports its own overflow as a SyntaxError (in eval, JSON.parse, or the program).
    if (
      (thrown.name === "InternalError" || thrown.name === "SyntaxError") &&
      thrown.message === "stack overflow"
    ) {
      this.stop("stack", `the program's call stack grew deeper than ${this.limits.stackBytes} bytes allow`);
      return this.stoppedOutcome();
    }
    if (phase === "compile" && thrown.name === "SyntaxError") {
      const at = /:(\d+):(\d+)/.exec(thrown.stack ?? "");
      const location = at === null ? undefined : programLocation(Number(at[1]), Number(at[2]));
      this.stop("syntax", describeSyntaxError(thrown.message, location));
      return this.stoppedOutcome();
    }
    if (phase !== "run") {
      throw new Error(`the sandbox's ${phase} failed: ${thrown.name}: ${thrown.message}`);
    }
    const outcome: ProgramOutcome = {
      kind: "threw",
      name: thrown.name,
      message: thrown.message,
      logs: this.logs,
    };
    if (thrown.stack !== undefined && thrown.stack !== "") outcome.stack = thrown.stack;
    return outcome;
  }

  /** Reads a thrown value through the prelude's `describe` (or QuickJS's dump before it exists). */
  private read(
    context: QuickJSContext,
    error: QuickJSHandle,
    describe: QuickJSHandle | undefined,
  ): z.infer<typeof describedSchema> {
    if (describe !== undefined) {
      this.answering = true;
      const described = this.slice(() => context.callFunction(describe, context.undefined, error));
      if (described.error === undefined) {
        const text = context.getString(this.keep(described.value));
        const parsed = describedSchema.safeParse(JSON.parse(text));
        if (parsed.success) return parsed.data;
      } else {
        this.keep(described.error);
      }
    }
    const dumped = describedSchema.safeParse(context.dump(error));
    return dumped.success
      ? dumped.data
      : { name: "Error", message: "the program threw a value that cannot be read" };
  }

  private stoppedOutcome(): ProgramOutcome {
    const stopped = this.stopped ?? { reason: "run_stopped", message: "the run was stopped" };
    return { kind: "stopped", ...stopped, logs: this.logs };
  }

  private keep(handle: QuickJSHandle): QuickJSHandle {
    this.handles.push(handle);
    return handle;
  }
}
