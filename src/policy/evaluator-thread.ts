/**
 * One policy evaluator thread as the gateway's thread drives it (evaluator.ts holds them): its
 * worker (`evaluator-worker.ts`), the shared memory an evaluation is handed over and answered in
 * (`evaluator-protocol.ts`), and the loads of its revision.
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort, type Worker } from "node:worker_threads";
import { z } from "zod";
import { moduleWorker } from "../core/module-worker.ts";
import { PolicyLoadError } from "./errors.ts";
import {
  bufferMessageSchema,
  DONE,
  type EvaluatorPolicy,
  FAILED,
  IDLE,
  INITIAL_BUFFER_BYTES,
  LENGTH,
  LOAD,
  READY,
  REQUEST,
  SLOTS,
  STATE,
} from "./evaluator-protocol.ts";

/** The module's own failure (a conflict, a strict builtin error, an abort), as its message. */
export class ModuleFailure extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = "ModuleFailure";
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What the worker tells the gateway's thread: a policy loaded, or why not. */
const loadedSchema = z.object({ loaded: z.boolean(), message: z.string().optional() });

/** One evaluator thread, as the gateway's thread drives it. */
export class EvaluatorThread {
  /** Resolves once the thread has loaded its first policy. */
  readonly ready: Promise<void>;
  /** The revision's policy the thread evaluates (after `ready`, and after each `load`). */
  policy: EvaluatorPolicy;
  ended = false;
  readonly #worker: Worker;
  readonly #control = new Int32Array(new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT));
  #buffer = new Uint8Array(new SharedArrayBuffer(INITIAL_BUFFER_BYTES));
  readonly #port: MessagePort;
  /** Waiting for the worker's answer to a load (the first one included). */
  #loaded: ((outcome: z.infer<typeof loadedSchema>) => void) | undefined;

  constructor(policy: EvaluatorPolicy, entrypoint: string) {
    this.policy = policy;
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    const extension = import.meta.url.endsWith(".ts") ? "ts" : "js";
    this.#worker = moduleWorker(new URL(`./evaluator-worker.${extension}`, import.meta.url), undefined, {
      workerData: {
        control: this.#control.buffer,
        buffer: this.#buffer.buffer,
        port: port2,
        entrypoint,
        policy,
      },
      transferList: [port2],
    });
    // Evaluations keep nothing alive: a process may exit with its evaluators idle.
    this.#worker.unref();
    port1.unref();
    this.#worker.on("message", (raw: unknown) => {
      const parsed = loadedSchema.safeParse(raw);
      if (parsed.success) this.#loaded?.(parsed.data);
    });
    const gone = (message: string) => {
      this.ended = true;
      this.#loaded?.({ loaded: false, message });
    };
    this.#worker.on("error", (error) => gone(`the policy evaluator thread failed: ${error.message}`));
    this.#worker.once("exit", () => gone("the policy evaluator thread exited"));
    this.ready = this.#answerToLoad();
    // A rejection nobody awaits (a spare's) is not an unhandled one.
    this.ready.catch(() => undefined);
  }

  /** Loads another revision's policy (the thread must be idle: not the one evaluating). */
  async load(policy: EvaluatorPolicy): Promise<void> {
    if (this.ended) throw new PolicyLoadError("the policy evaluator thread has ended", []);
    const answered = this.#answerToLoad();
    this.#port.postMessage({ policy });
    Atomics.store(this.#control, STATE, LOAD);
    Atomics.notify(this.#control, STATE);
    await answered;
    this.policy = policy;
  }

  /** Waits (blocking) until the thread has loaded its policy or `deadline` passed: whether it did. */
  waitReady(deadline: number): boolean {
    for (;;) {
      const ready = Atomics.load(this.#control, READY);
      if (ready === 1) return true;
      const left = deadline - performance.now();
      if (ready === 2 || this.ended || left <= 0) return false;
      Atomics.wait(this.#control, READY, ready, left);
    }
  }

  /** Hands `text` (the input's JSON, undefined for none) over: the thread starts evaluating it. */
  handOver(text: string | undefined): void {
    const control = this.#control;
    Atomics.store(control, LENGTH, text === undefined ? -1 : this.#write(text));
    Atomics.store(control, STATE, REQUEST);
    Atomics.notify(control, STATE);
  }

  /** Whether the evaluation handed over is answered. */
  get answered(): boolean {
    const state = Atomics.load(this.#control, STATE);
    return state === DONE || state === FAILED;
  }

  /** Waits (blocking) for the answer until `deadline`: whether it came. */
  waitAnswer(deadline: number): boolean {
    for (;;) {
      if (this.answered) return true;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      Atomics.wait(this.#control, STATE, REQUEST, left);
    }
  }

  /** Resolves once the answer came or `budgetMs` passed (the event loop goes on meanwhile). */
  async waitAnswerAsync(budgetMs: number): Promise<void> {
    const waited = Atomics.waitAsync(this.#control, STATE, REQUEST, budgetMs);
    if (waited.async) await waited.value;
  }

  /** The answer (after `answered`): the result set's JSON text. Throws ModuleFailure. */
  collect(): string {
    const control = this.#control;
    // The worker sends a larger buffer first when its answer did not fit.
    for (
      let message = receiveMessageOnPort(this.#port);
      message;
      message = receiveMessageOnPort(this.#port)
    ) {
      const parsed = bufferMessageSchema.safeParse(message.message);
      if (parsed.success) this.#buffer = new Uint8Array(parsed.data.buffer);
    }
    const answer = decoder.decode(this.#buffer.subarray(0, Atomics.load(control, LENGTH)));
    const failed = Atomics.load(control, STATE) === FAILED;
    Atomics.store(control, STATE, IDLE);
    if (failed) throw new ModuleFailure(answer);
    return answer;
  }

  end(): void {
    this.ended = true;
    void this.#worker.terminate();
    this.#port.close();
  }

  /** Resolves when the worker says it loaded a policy; rejects (PolicyLoadError) when it could not. */
  #answerToLoad(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#loaded = (outcome) => {
        this.#loaded = undefined;
        if (outcome.loaded) resolve();
        else
          reject(
            new PolicyLoadError(
              outcome.message ?? "the policy evaluator thread could not load the policy",
              [],
            ),
          );
      };
    });
  }

  /** Writes `text` into the shared buffer, sending a larger one first when it does not fit: its bytes. */
  #write(text: string): number {
    const { read, written } = encoder.encodeInto(text, this.#buffer);
    if (read === text.length) return written;
    const larger = new SharedArrayBuffer(Math.max(this.#buffer.length * 2, text.length * 3));
    this.#port.postMessage({ buffer: larger });
    this.#buffer = new Uint8Array(larger);
    return encoder.encodeInto(text, this.#buffer).written;
  }
}
