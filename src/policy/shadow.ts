/**
 * Shadow mode (issue 19): a candidate policy decides every call beside the live one, after the
 * live answer's entry is durable and without holding the answer up. Its decision never reaches
 * the caller; where it disagrees with the live one (another decision, other reason codes, other
 * conditions), the disagreement is recorded (`record`: a decision-log entry linked to the live
 * decision) and counted. The work queues up to a bound and is drained a few calls per turn of the
 * event loop; past the bound calls are skipped and counted, never held.
 */
import { canonicalJson } from "../core/digest.ts";
import type { PolicyDecision, PolicyInput } from "../core/types.ts";
import type { PolicyEngine } from "./engine.ts";
import { evaluateFailClosed } from "./fail-closed.ts";

/** The live decision a shadow evaluation is compared with. */
export interface LiveDecision {
  decisionId: string;
  decision: PolicyDecision;
  revision: string;
}

export interface Disagreement {
  input: PolicyInput;
  live: LiveDecision;
  shadow: { decision: PolicyDecision; revision: string; failure: string | undefined };
}

export interface ShadowCounters {
  shadowDecisions: { inc(labels: { outcome: "agree" | "disagree" | "failed" }): void };
  shadowDropped: { inc(): void };
}

export interface ShadowPolicyOptions {
  /** Calls waiting for the shadow policy beyond which new ones are skipped (default 1,000). */
  maxQueue?: number;
  /** Calls evaluated per turn of the event loop (default 16). */
  perTurn?: number;
}

interface Pending<Context> {
  input: PolicyInput;
  live: LiveDecision;
  /** Passed back to `record` with the disagreement (who, what, which request). */
  context: Context;
}

export class ShadowPolicy<Context = unknown> {
  readonly #engine: PolicyEngine;
  readonly #record: (disagreement: Disagreement, context: Context) => Promise<unknown>;
  readonly #metrics: ShadowCounters;
  readonly #maxQueue: number;
  readonly #perTurn: number;
  readonly #queue: Pending<Context>[] = [];
  #scheduled = false;
  readonly #recording = new Set<Promise<unknown>>();
  #recordFailed = false;

  constructor(
    engine: PolicyEngine,
    record: (disagreement: Disagreement, context: Context) => Promise<unknown>,
    metrics: ShadowCounters,
    options: ShadowPolicyOptions = {},
  ) {
    this.#engine = engine;
    this.#record = record;
    this.#metrics = metrics;
    this.#maxQueue = options.maxQueue ?? 1000;
    this.#perTurn = options.perTurn ?? 16;
  }

  get revision(): string | undefined {
    return this.#engine.revision;
  }

  /** Queues the call for the shadow policy; returns at once. */
  observe(input: PolicyInput, live: LiveDecision, context: Context): void {
    if (this.#queue.length >= this.#maxQueue) {
      this.#metrics.shadowDropped.inc();
      return;
    }
    this.#queue.push({ input, live, context });
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#drain());
    }
  }

  /** Resolves once every call queued so far is decided and its disagreement recorded. */
  async flush(): Promise<void> {
    while (this.#scheduled || this.#queue.length > 0 || this.#recording.size > 0) {
      if (this.#recording.size > 0) await Promise.allSettled([...this.#recording]);
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  #drain(): void {
    this.#scheduled = false;
    for (const pending of this.#queue.splice(0, this.#perTurn)) this.#decide(pending);
    if (this.#queue.length > 0 && !this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#drain());
    }
  }

  #decide({ input, live, context }: Pending<Context>): void {
    // As the live pipeline fails closed: a shadow policy that cannot decide denies.
    const evaluated = evaluateFailClosed(this.#engine, input);
    const { decision, revision } = evaluated;
    const failure = evaluated.failure?.code;
    const agrees = failure === undefined && sameDecision(live.decision, decision);
    this.#metrics.shadowDecisions.inc({ outcome: failure ? "failed" : agrees ? "agree" : "disagree" });
    if (agrees) return;
    const recording = this.#record({ input, live, shadow: { decision, revision, failure } }, context)
      .catch((error: unknown) => {
        // Reported once per process: a store that refuses these would otherwise flood the console.
        if (!this.#recordFailed)
          console.error(`shadow policy: a disagreement could not be recorded: ${String(error)}`);
        this.#recordFailed = true;
      })
      .finally(() => this.#recording.delete(recording));
    this.#recording.add(recording);
  }
}

/** Two decisions agree when their kind, their reasons' codes and their conditions are the same. */
export function sameDecision(a: PolicyDecision, b: PolicyDecision): boolean {
  if (a.decision !== b.decision) return false;
  const codes = (d: PolicyDecision) => [...new Set(d.reasons.map((r) => r.code))].sort().join("\u0000");
  if (codes(a) !== codes(b)) return false;
  return canonicalJson(a.conditions) === canonicalJson(b.conditions);
}
