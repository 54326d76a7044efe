/**
 * A policy evaluator thread: loads a policy revision into its own opa-wasm instance, then answers
 * evaluations handed over through shared memory (`evaluator-protocol.ts`), one at a time, and
 * loads the next revision when asked. The gateway's thread ends this thread when an evaluation
 * overruns its budget: whatever the module was doing stops there, with the instance.
 */
import { parentPort, receiveMessageOnPort, workerData } from "node:worker_threads";
import { errorMessage } from "../core/errors.ts";
import { type CustomBuiltins, loadCustomBuiltins } from "../rego/builtins/custom.ts";
import { loadCompiledPolicy, loadPolicyFromBundle, type Policy } from "../rego/policy.ts";
import {
  DONE,
  type EvaluatorPolicy,
  FAILED,
  IDLE,
  LENGTH,
  LOAD,
  portMessageSchema,
  READY,
  REQUEST,
  STATE,
  workerDataSchema,
} from "./evaluator-protocol.ts";

const setup = workerDataSchema.parse(workerData);
const control = new Int32Array(setup.control);
let buffer = new Uint8Array(setup.buffer);
/** The policy the next LOAD loads (sent on the port before it). */
let next: EvaluatorPolicy | undefined;
const encoder = new TextEncoder();

/** Writes `text` into the shared buffer (a larger one, sent on the port first, when it needs one). */
function answer(state: typeof DONE | typeof FAILED, text: string): void {
  let { read, written } = encoder.encodeInto(text, buffer);
  if (read < text.length) {
    const larger = new SharedArrayBuffer(text.length * 3);
    setup.port.postMessage({ buffer: larger });
    buffer = new Uint8Array(larger);
    ({ written } = encoder.encodeInto(text, buffer));
  }
  Atomics.store(control, LENGTH, written);
  Atomics.store(control, STATE, state);
  Atomics.notify(control, STATE);
}

/** What the gateway's thread sent on the port: a larger buffer, the next policy. */
function drainPort(): void {
  for (let message = receiveMessageOnPort(setup.port); message; message = receiveMessageOnPort(setup.port)) {
    const parsed = portMessageSchema.safeParse(message.message);
    if (!parsed.success) continue;
    if ("buffer" in parsed.data) buffer = new Uint8Array(parsed.data.buffer);
    else next = parsed.data.policy;
  }
}

/** Custom builtins by the modules they come from (a reload with the same ones imports nothing). */
const imported = new Map<string, Promise<CustomBuiltins>>();

function customBuiltins(modules: readonly string[] | undefined): Promise<CustomBuiltins> | undefined {
  if (modules === undefined || modules.length === 0) return undefined;
  const key = JSON.stringify(modules);
  let builtins = imported.get(key);
  if (builtins === undefined) {
    builtins = loadCustomBuiltins(modules);
    imported.set(key, builtins);
  }
  return builtins;
}

async function load(policy: EvaluatorPolicy): Promise<Policy> {
  const builtins = await customBuiltins(policy.builtinModules);
  const host = {
    ...(builtins === undefined ? {} : { builtins }),
    ...(policy.runtime === undefined ? {} : { runtime: policy.runtime }),
  };
  return policy.kind === "bundle"
    ? loadPolicyFromBundle(policy.bytes, host)
    : loadCompiledPolicy({
        wasm: policy.wasm,
        hostBuiltins: policy.hostBuiltins,
        data: policy.data,
        ...host,
      });
}

let policy: Policy;
try {
  policy = await load(setup.policy);
} catch (error) {
  Atomics.store(control, READY, 2);
  Atomics.notify(control, READY);
  parentPort?.postMessage({ loaded: false, message: errorMessage(error) });
  throw error;
}
Atomics.store(control, READY, 1);
Atomics.notify(control, READY);
parentPort?.postMessage({ loaded: true });

for (;;) {
  const state = Atomics.load(control, STATE);
  if (state === LOAD) {
    drainPort();
    const loading = next;
    next = undefined;
    let outcome: { loaded: boolean; message?: string };
    try {
      if (loading === undefined) throw new Error("no policy was sent to load");
      policy = await load(loading);
      outcome = { loaded: true };
    } catch (error) {
      outcome = { loaded: false, message: errorMessage(error) };
    }
    // Idle before the answer: the gateway's thread may hand an evaluation over as soon as it has it.
    Atomics.store(control, STATE, IDLE);
    parentPort?.postMessage(outcome);
    continue;
  }
  if (state !== REQUEST) {
    Atomics.wait(control, STATE, state);
    continue;
  }
  drainPort();
  // The input's JSON text, copied out of shared memory for the SDK (which copies it into the
  // module); a length of -1 stands for no input.
  const length = Atomics.load(control, LENGTH);
  const input = length < 0 ? undefined : buffer.slice(0, length).buffer;
  let text: string;
  try {
    text = JSON.stringify(policy.evaluate(input, setup.entrypoint));
  } catch (error) {
    answer(FAILED, errorMessage(error));
    continue;
  }
  answer(DONE, text);
}
