/**
 * Code Mode's sandbox: runs a model's program (TypeScript or JavaScript, the body of an async
 * function) in QuickJS compiled to WebAssembly, with nothing of the host in reach but `tools`
 * (each call answered by the caller's `InnerCall`) and a bounded `console`. Memory, stack, CPU
 * time, wall time, inner calls, their concurrency and the result's size are limited; a limit
 * ends the run with a `stopped` outcome naming it.
 *
 * The WebAssembly module is loaded once per process, on the first run; every run gets a fresh
 * QuickJS runtime and context, disposed when it ends, so no run sees another's globals.
 */
import type { QuickJSSyncVariant, QuickJSWASMModule } from "quickjs-emscripten-core";
import { WritError } from "../core/errors.ts";
import { isRecord } from "../core/json.ts";
import { EngineFault, type EngineRun, startEngineRun } from "./sandbox-run.ts";
import type { CallAnswer, ProgramOutcome, SandboxLimits } from "./sandbox-types.ts";
import { describeSyntaxError, transpileProgram } from "./transpile.ts";

export type { ProgramOutcome, SandboxLimits, StopReason } from "./sandbox-types.ts";

export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  memoryBytes: 32 * 1024 * 1024,
  // QuickJS counts its stack in WebAssembly's linear memory, but the engine's C frames also use
  // the host thread's native stack, several times more per JavaScript call: on Node's main
  // thread (about 1 MB) 256 KiB is about 1,400 plain recursive calls and stays clear of it.
  stackBytes: 256 * 1024,
  cpuMs: 1000,
  durationMs: 30_000,
  maxCalls: 50,
  maxConcurrentCalls: 4,
  maxResultBytes: 64 * 1024,
  maxLogBytes: 16 * 1024,
});

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

let quickjs: Promise<QuickJSWASMModule> | undefined;

/** The QuickJS WebAssembly module, loaded on first use (and again after a fault dropped it). */
function loadQuickJS(): Promise<QuickJSWASMModule> {
  if (quickjs !== undefined) return quickjs;
  const loading = Promise.all([
    import("quickjs-emscripten-core"),
    import("@jitl/quickjs-wasmfile-release-sync"),
  ]).then(([core, variant]) => core.newQuickJSWASMModuleFromVariant(syncVariant(variant)));
  quickjs = loading;
  loading.catch(() => dropQuickJS(loading));
  return loading;
}

/**
 * The variant package's default export: ESM gives it as `default`; its types describe the CommonJS
 * build, where it sits one `default` deeper.
 */
function syncVariant(namespace: unknown): QuickJSSyncVariant {
  const outer = isRecord(namespace) ? namespace.default : undefined;
  const candidate = isRecord(outer) && !isSyncVariant(outer) ? outer.default : outer;
  if (isSyncVariant(candidate)) return candidate;
  throw new WritError("internal", "@jitl/quickjs-wasmfile-release-sync does not export a QuickJS variant", {
    suggestedFix: "install the version in package.json (npm install)",
  });
}

function isSyncVariant(value: unknown): value is QuickJSSyncVariant {
  return isRecord(value) && value.type === "sync" && typeof value.importFFI === "function";
}

/** Forgets a loaded (or failed) module so the next run loads a fresh instance. */
function dropQuickJS(loading: Promise<QuickJSWASMModule>): void {
  if (quickjs === loading) quickjs = undefined;
}

/** The runs in progress on each module instance, stopped together if the instance faults. */
const live = new WeakMap<QuickJSWASMModule, Set<EngineRun>>();

/** Strips TypeScript (sucrase), wraps the program as the body of an async function, runs it. */
export async function runProgram(source: string, options: RunProgramOptions): Promise<ProgramOutcome> {
  const limits: SandboxLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const started = Date.now();
  const transpiled = await transpileProgram(source);
  if (!transpiled.ok) {
    return {
      kind: "stopped",
      reason: "syntax",
      message: describeSyntaxError(transpiled.message, transpiled.location),
      logs: [],
    };
  }
  if (options.signal?.aborted)
    return {
      kind: "stopped",
      reason: "run_stopped",
      message: "the run was stopped before it began",
      logs: [],
    };
  const loading = loadQuickJS();
  const module = await loading;
  const run = startEngineRun(module, {
    code: transpiled.code,
    tools: options.tools,
    limits,
    clockMs: started,
    host: { call: (tool, argsJson, index) => answer(options.call, tool, argsJson, index) },
  });
  const runs = live.get(module) ?? new Set<EngineRun>();
  live.set(module, runs);
  runs.add(run);
  const timer = setTimeout(
    () => run.stop("duration", `the program ran longer than ${limits.durationMs} ms`),
    Math.max(0, limits.durationMs - (Date.now() - started)),
  );
  const onAbort = () => run.stop("run_stopped", "the run was stopped", jsonSafe(options.signal?.reason));
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await run.outcome;
  } catch (error) {
    if (!(error instanceof EngineFault)) throw error;
    dropQuickJS(loading);
    return faulted(module, run, error);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    runs.delete(run);
  }
}

/**
 * The WebAssembly instance faulted under this run (the host's stack overflowed inside QuickJS's
 * C code, or a trap): the instance is dropped, with the other runs on it, and the next run loads
 * a fresh one.
 */
function faulted(module: QuickJSWASMModule, run: EngineRun, error: EngineFault): ProgramOutcome {
  for (const other of live.get(module) ?? []) {
    if (other !== run)
      other.stop("run_stopped", "another program broke the sandbox this run shared; run it again");
  }
  live.delete(module);
  if (error.fault instanceof RangeError) {
    return {
      kind: "stopped",
      reason: "stack",
      message: "the program's call stack grew deeper than the host allows",
      logs: [],
    };
  }
  throw new WritError("internal", "the Code Mode sandbox failed while running the program", {
    suggestedFix: "run the program again; if it persists, report it to the operator",
    cause: error.fault,
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

/**
 * The size of the sandbox's WebAssembly memory in bytes (0 before the first run). It grows to
 * the largest demand of the runs at one time and never shrinks; steady across runs, it shows
 * that runs free what they allocate.
 */
export async function sandboxMemoryBytes(): Promise<number> {
  if (quickjs === undefined) return 0;
  const module = await quickjs;
  return module.getWasmMemory().buffer.byteLength;
}
