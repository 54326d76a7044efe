/**
 * Policy evaluation on worker threads, held to its time budget while it runs (issue 27). The
 * gateway's thread hands each evaluation to an evaluator thread (`evaluator-worker.ts`, with its
 * own opa-wasm instance of the live revision; `evaluator-thread.ts`) through shared memory and
 * waits for the answer for at most the budget: `evaluate` with `Atomics.wait` (synchronous: tool
 * discovery, a shadow policy, replay), `evaluateAsync` with `Atomics.waitAsync`, the event loop
 * serving other requests meanwhile (a call's decide stage; such evaluations take turns on the
 * thread). A policy that runs longer is not waited for. That thread is then ended (stopping the
 * module where it is) and the spare, loaded beforehand, takes its place; another spare is started
 * in the background.
 *
 * A new revision is loaded into the spare while the active thread goes on evaluating the old one;
 * then they swap, and the old thread loads the new revision to become the spare: a reload starts
 * no thread.
 *
 * What remains: a synchronous evaluation still holds the gateway's thread up to the budget (the
 * budget bounds what one slow evaluation costs the event loop, it does not make it free), and
 * right after an overrun, until the spare is loaded, evaluations wait for it within their budget
 * and otherwise fail closed.
 */
import { evaluationFailure, PolicyFailure } from "./errors.ts";
import type { EvaluatorPolicy } from "./evaluator-protocol.ts";
import { EvaluatorThread } from "./evaluator-thread.ts";

export type { EvaluatorPolicy } from "./evaluator-protocol.ts";
export { ModuleFailure } from "./evaluator-thread.ts";

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

/** What an evaluation's failure (an evaluator's, or the module's own) means for the decision. */
export function evaluatorFailure(error: unknown): PolicyFailure {
  if (error instanceof EvaluationOverrun) return new PolicyFailure("policy_too_slow", error.message);
  if (error instanceof EvaluatorUnavailable) return new PolicyFailure("policy_unavailable", error.message);
  return evaluationFailure(error);
}

/** An evaluation `evaluateAsync` was asked for. */
interface Job {
  text: string;
  budgetMs: number;
  resolve: (results: unknown) => void;
  reject: (error: unknown) => void;
}

/** A job handed over to `thread`, until `deadline`. */
interface Running {
  thread: EvaluatorThread;
  job: Job;
  deadline: number;
}

/** An engine's evaluator threads: the one evaluating and a spare, both at the live revision. */
export class EvaluatorThreads {
  #active: EvaluatorThread;
  #spare: EvaluatorThread | undefined;
  /** The live revision's policy: what a replacement thread loads. */
  #policy: EvaluatorPolicy;
  /** Loads take turns. */
  #loading: Promise<unknown> = Promise.resolve();
  /** Evaluations `evaluateAsync` handed in, waiting for their turn. */
  readonly #jobs: Job[] = [];
  /** The evaluation handed over without waiting, while its thread runs it. */
  #running: Running | undefined;
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
   * ModuleFailure when the module failed. An evaluation handed over by `evaluateAsync` is
   * answered first (waited for within its own budget).
   */
  evaluate(input: unknown, budgetMs: number): unknown {
    this.#finishRunning();
    try {
      const deadline = performance.now() + budgetMs;
      const thread = this.#ready(deadline, budgetMs);
      thread.handOver(JSON.stringify(input));
      if (!thread.waitAnswer(deadline)) {
        this.#replace(thread);
        throw new EvaluationOverrun(budgetMs);
      }
      return JSON.parse(thread.collect());
    } finally {
      this.#next();
    }
  }

  /**
   * As `evaluate`, without holding up the event loop while the thread evaluates: evaluations
   * take turns on the active thread, each held to `budgetMs` from when it is handed over.
   */
  evaluateAsync(input: unknown, budgetMs: number): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      this.#jobs.push({ text: JSON.stringify(input), budgetMs, resolve, reject });
      this.#next();
    });
  }

  /** Ends every thread. */
  close(): void {
    this.#closed = true;
    const waiting = [...(this.#running ? [this.#running.job] : []), ...this.#jobs.splice(0)];
    this.#running = undefined;
    for (const job of waiting) job.reject(new EvaluatorUnavailable(job.budgetMs));
    this.#active.end();
    this.#spare?.end();
    this.#spare = undefined;
  }

  /** Hands the next waiting evaluation over, unless one is running. */
  #next(): void {
    while (this.#running === undefined && !this.#closed) {
      const job = this.#jobs.shift();
      if (job === undefined) return;
      const deadline = performance.now() + job.budgetMs;
      let thread: EvaluatorThread;
      try {
        thread = this.#ready(deadline, job.budgetMs);
      } catch (error) {
        job.reject(error);
        continue;
      }
      thread.handOver(job.text);
      const running = { thread, job, deadline };
      this.#running = running;
      const settle = () => {
        this.#settle(running);
        this.#next();
      };
      thread.waitAnswerAsync(job.budgetMs).then(settle, settle);
    }
  }

  /** The running evaluation's answer (or overrun) given to its caller (once). */
  #settle(running: Running): void {
    if (this.#running !== running) return;
    this.#running = undefined;
    const { thread, job } = running;
    if (!thread.answered) {
      this.#replace(thread);
      job.reject(new EvaluationOverrun(job.budgetMs));
    } else {
      try {
        job.resolve(JSON.parse(thread.collect()));
      } catch (error) {
        job.reject(error);
      }
    }
  }

  /** Waits (blocking) for the running evaluation, within its budget, and settles it. */
  #finishRunning(): void {
    const running = this.#running;
    if (running === undefined) return;
    running.thread.waitAnswer(running.deadline);
    this.#settle(running);
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
    // An evaluation running on the old revision is answered before its thread loads the new one.
    this.#finishRunning();
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
    this.#next();
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
