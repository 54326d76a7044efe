/**
 * The sandbox's thread: transpiles and runs programs in QuickJS (`sandbox-run.ts`) for the
 * gateway's thread, which answers their inner calls and may stop them (`sandbox-protocol.ts`).
 * Running here keeps a program's CPU time off the gateway's event loop, and the thread's large
 * stack keeps QuickJS's own stack limit the one that trips.
 */
import { parentPort } from "node:worker_threads";
import { dropInstance, loadedInstance, releaseRun, sandboxInstance } from "./sandbox-instance.ts";
import {
  type FromSandbox,
  SLICE_BUDGET,
  SLICE_RUN,
  SLICE_SINCE,
  SLICE_SLOTS,
  type ToSandbox,
  toSandbox,
} from "./sandbox-protocol.ts";
import { EngineFault, type EngineRun, startEngineRun } from "./sandbox-run.ts";
import type { CallAnswer, ProgramOutcome, StopReason } from "./sandbox-types.ts";
import { describeSyntaxError, transpileProgram } from "./transpile.ts";

const port = parentPort;
if (port === null) throw new Error("sandbox-worker.ts runs as a worker thread");

interface Pending {
  run?: EngineRun;
  /** A stop that arrived before the engine started (while transpiling or loading). */
  stop?: { reason: StopReason; message: string; detail?: unknown };
  answers: Map<number, (answer: CallAnswer) => void>;
}

const runs = new Map<number, Pending>();
let slices: Int32Array<ArrayBufferLike> = new Int32Array(SLICE_SLOTS);
let epoch = 0;

function post(message: FromSandbox): void {
  port?.postMessage(message);
}

port.on("message", (raw: unknown) => {
  const parsed = toSandbox.safeParse(raw);
  if (!parsed.success) return;
  receive(parsed.data);
});

function receive(message: ToSandbox): void {
  switch (message.type) {
    case "init":
      slices = new Int32Array(message.slices);
      epoch = message.epoch;
      return;
    case "run":
      void start(message);
      return;
    case "answer":
      runs.get(message.id)?.answers.get(message.index)?.(message.answer);
      return;
    case "stop": {
      const pending = runs.get(message.id);
      if (pending === undefined) return;
      const stop = { reason: message.reason, message: message.message, detail: message.detail };
      if (pending.run === undefined) pending.stop = stop;
      else pending.run.stop(stop.reason, stop.message, stop.detail);
      return;
    }
    case "memory":
      void loadedInstance().then((instance) =>
        post({
          type: "memory",
          id: message.id,
          bytes: instance?.module.getWasmMemory().buffer.byteLength ?? 0,
        }),
      );
      return;
  }
}

async function start(message: Extract<ToSandbox, { type: "run" }>): Promise<void> {
  const { id } = message;
  const pending: Pending = { answers: new Map() };
  runs.set(id, pending);
  try {
    post({ type: "done", id, outcome: await execute(message, pending) });
  } catch (error) {
    post({ type: "failed", id, message: error instanceof Error ? error.message : String(error) });
  } finally {
    runs.delete(id);
  }
}

async function execute(
  message: Extract<ToSandbox, { type: "run" }>,
  pending: Pending,
): Promise<ProgramOutcome> {
  const { id, limits } = message;
  const transpiled = await transpileProgram(message.source);
  if (!transpiled.ok) {
    const text = describeSyntaxError(transpiled.message, transpiled.location);
    return { kind: "stopped", reason: "syntax", message: text, logs: [] };
  }
  const instance = await sandboxInstance();
  const run = startEngineRun(instance.module, {
    code: transpiled.code,
    tools: message.tools,
    limits,
    clockMs: message.clockMs,
    host: {
      call: (tool, argsJson, index) =>
        new Promise<CallAnswer>((resolve) => {
          pending.answers.set(index, (answer) => {
            pending.answers.delete(index);
            resolve(answer);
          });
          post({ type: "call", id, index, tool, argsJson });
        }),
      late: (tool, argsJson, index) => post({ type: "late_call", id, index, tool, argsJson }),
    },
    onSlice: (active, cpuLeftMs) => {
      Atomics.store(slices, SLICE_SINCE, Date.now() - epoch);
      Atomics.store(slices, SLICE_BUDGET, Math.max(0, Math.ceil(cpuLeftMs)));
      Atomics.store(slices, SLICE_RUN, active ? id : 0);
    },
  });
  pending.run = run;
  instance.runs.add(run);
  if (pending.stop !== undefined) run.stop(pending.stop.reason, pending.stop.message, pending.stop.detail);
  try {
    return await run.outcome;
  } catch (error) {
    if (!(error instanceof EngineFault)) throw error;
    // The instance faulted under this run (its host stack, a trap): nothing in it can be trusted.
    await dropInstance(instance);
    for (const other of instance.runs) {
      if (other !== run) other.abandon("another program broke the sandbox this run shared; run it again");
    }
    if (error.fault instanceof RangeError) {
      return {
        kind: "stopped",
        reason: "stack",
        message: "the program's call stack grew too deep",
        logs: [],
      };
    }
    throw error;
  } finally {
    await releaseRun(instance, run);
  }
}
