/**
 * Policy evaluation on worker threads, held to its time budget while it runs (issue 27). The
 * gateway's thread hands each evaluation to an evaluator thread (`evaluator-worker.ts`, with its
 * own opa-wasm instance of the live revision) through shared memory and waits for the answer with
 * `Atomics.wait`, for at most the budget: the API stays synchronous, and a policy that runs
 * longer is not waited for. That thread is then ended (stopping the module where it is) and the
 * spare, loaded beforehand, takes its place; another spare is started in the background.
 *
 * A new revision is loaded into the spare while the active thread goes on evaluating the old one;
 * then they swap, and the old thread loads the new revision to become the spare: a reload starts
 * no thread.
 *
 * What remains: the gateway's thread still waits, up to the budget, for each evaluation (the
 * budget bounds what one slow evaluation costs the event loop, it does not make it free), and
 * right after an overrun, until the spare is loaded, evaluations wait for it within their budget
 * and otherwise fail closed.
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

export type { EvaluatorPolicy } from "./evaluator-protocol.ts";

/** The evaluation ran past its budget: its thread was ended. */
export class EvaluationOverrun extends Error {
  constructor(readonly budgetMs: number) {
    super(`the policy ran past its ${budgetMs} ms budget and was stopped there`);
    this.name = "EvaluationOverrun";
  }
}

/** No evaluator thread was ready within the budget (one is being loaded after an overrun). */
export class EvaluatorUnavailable extends Error {
  constructor(budgetMs: number) {
    super(`no policy evaluator was ready within the ${budgetMs} ms budget (one is restarting)`);
    this.name = "EvaluatorUnavailable";
  }
}

/** The module's own failure (a conflict, a strict builtin error, an abort), as its message. */
export class ModuleFailure extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = "ModuleFailure";
  }
}

/** An engine's evaluator threads: the one evaluating and a spare, both at the live revision. */
export class EvaluatorThreads {
  #active: EvaluatorThread;
  #spare: EvaluatorThread | undefined;
  /** The live revision's policy: what a replacement thread loads. */
  #policy: EvaluatorPolicy;
  /** Loads take turns. */
  #loading: Promise<unknown> = Promise.resolve();
  #closed = false;

  private constructor(
    private readonly entrypoint: string,
    policy: EvaluatorPolicy,
    active: EvaluatorThread,
  ) {
    this.#policy = policy;
    this.#active = active;
  }

  /** Starts a thread with the revision (and a spare in the background); rejects with PolicyLoadError. */
  static async start(policy: EvaluatorPolicy, entrypoint: string): Promise<EvaluatorThreads> {
    const first = new EvaluatorThread(policy, entrypoint);
    try {
      await first.ready;
    } catch (error) {
      first.end();
      throw error;
    }
    const threads = new EvaluatorThreads(entrypoint, policy, first);
    threads.#prepareSpare();
    return threads;
  }

  /**
   * Makes `policy` the revision evaluations run on, once it is loaded (rejects with
   * PolicyLoadError, the live revision unchanged). The active thread evaluates the old one until
   * then.
   */
  load(policy: EvaluatorPolicy): Promise<void> {
    const loading = this.#loading.then(() => this.#swapIn(policy));
    this.#loading = loading.catch(() => undefined);
    return loading;
  }

  /**
   * The module's result set for `input`, as the SDK answers it. Waits at most `budgetMs`:
   * throws EvaluationOverrun past it, EvaluatorUnavailable when no thread was ready in time,
   * ModuleFailure when the module failed.
   */
  evaluate(input: unknown, budgetMs: number): unknown {
    const deadline = performance.now() + budgetMs;
    const thread = this.#ready(deadline, budgetMs);
    const text = thread.evaluate(JSON.stringify(input), deadline);
    if (text === undefined) {
      this.#replace(thread);
      throw new EvaluationOverrun(budgetMs);
    }
    return JSON.parse(text);
  }

  /** Ends every thread. */
  close(): void {
    this.#closed = true;
    this.#active.end();
    this.#spare?.end();
    this.#spare = undefined;
  }

  async #swapIn(policy: EvaluatorPolicy): Promise<void> {
    const spare = this.#spare;
    this.#spare = undefined;
    let next: EvaluatorThread;
    if (
      spare !== undefined &&
      (await spare.ready.then(
        () => !spare.ended,
        () => false,
      ))
    ) {
      next = spare;
      await next.load(policy).catch((error: unknown) => {
        // The spare could not take it: it is dropped (the next overrun starts one).
        next.end();
        throw error;
      });
    } else {
      spare?.end();
      next = new EvaluatorThread(policy, this.entrypoint);
      await next.ready.catch((error: unknown) => {
        next.end();
        throw error;
      });
    }
    if (this.#closed) {
      next.end();
      return;
    }
    const previous = this.#active;
    this.#active = next;
    this.#policy = policy;
    // The thread that evaluated the old revision catches up and becomes the spare.
    previous.load(policy).then(
      () => {
        if (this.#closed || this.#spare !== undefined || this.#policy !== policy) previous.end();
        else this.#spare = previous;
      },
      () => previous.end(),
    );
  }

  /** The thread to evaluate on, once it is loaded (waiting until `deadline` at most). */
  #ready(deadline: number, budgetMs: number): EvaluatorThread {
    if (this.#active.ended) this.#replace(this.#active);
    if (!this.#active.waitReady(deadline)) {
      if (this.#active.ended) this.#replace(this.#active);
      throw new EvaluatorUnavailable(budgetMs);
    }
    return this.#active;
  }

  /** Ends `thread`; the spare (or a new thread) takes its place, and a new spare is started. */
  #replace(thread: EvaluatorThread): void {
    thread.end();
    if (thread !== this.#active || this.#closed) return;
    const spare = this.#spare;
    this.#spare = undefined;
    this.#active =
      spare !== undefined && spare.policy === this.#policy
        ? spare
        : new EvaluatorThread(this.#policy, this.entrypoint);
    if (spare !== undefined && spare !== this.#active) spare.end();
    this.#prepareSpare();
  }

  #prepareSpare(): void {
    if (this.#closed || this.#spare !== undefined) return;
    const spare = new EvaluatorThread(this.#policy, this.entrypoint);
    this.#spare = spare;
    spare.ready.catch(() => {
      // Loaded once already on another thread, this one failed for want of resources: the
      // next overrun starts one when it needs it.
      if (this.#spare === spare) this.#spare = undefined;
      spare.end();
    });
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What the worker tells the gateway's thread: a policy loaded, or why not. */
const loadedSchema = z.object({ loaded: z.boolean(), message: z.string().optional() });

/** One evaluator thread, as the gateway's thread drives it. */
class EvaluatorThread {
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

  /**
   * Hands `text` (the input's JSON, undefined for none) over and waits for the answer until
   * `deadline`: the result set's JSON text, or undefined when the deadline passed first. Throws
   * ModuleFailure for the module's own failure.
   */
  evaluate(text: string | undefined, deadline: number): string | undefined {
    const control = this.#control;
    Atomics.store(control, LENGTH, text === undefined ? -1 : this.#write(text));
    Atomics.store(control, STATE, REQUEST);
    Atomics.notify(control, STATE);
    for (;;) {
      const state = Atomics.load(control, STATE);
      if (state === DONE || state === FAILED) break;
      const left = deadline - performance.now();
      if (left <= 0) return undefined;
      Atomics.wait(control, STATE, REQUEST, left);
    }
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
