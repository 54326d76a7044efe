/**
 * What the gateway's parts need of the live policy (`Gateway.policy`): deciding, and what it runs.
 * `PolicyEngine` (engine.ts) implements it.
 */
import type { PolicyDecision, PolicyInput } from "../core/types.ts";
import type { CustomBuiltins } from "../rego/builtins/custom.ts";

export interface EvaluatedDecision {
  decision: PolicyDecision;
  revision: string;
  evalNs: number;
}

export interface PolicyDecider {
  /** The rule a decision is read from (e.g. `writ/decision`). */
  readonly entrypoint: string;
  readonly builtins: CustomBuiltins | undefined;
  /** The revision deciding now (undefined before a policy loaded). */
  readonly revision: string | undefined;
  /** Why the last reload failed, while the previous revision goes on deciding. */
  readonly lastLoadError: string | undefined;
  /**
   * Tells `listener` of every revision swapped in after this call (a reload, a bundle), once it
   * decides. Returns the function that stops telling it. A listener must not throw.
   */
  onInstalled(listener: (revision: string) => void): () => void;
  evaluate(input: PolicyInput): EvaluatedDecision;
  /** Evaluates an input read back from the log (`unknown`: parsed first). */
  evaluateStored(input: unknown): EvaluatedDecision;
}
