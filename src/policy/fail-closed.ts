/**
 * The one fail-closed evaluation: every caller of a policy (a call's decide stage, an approval,
 * Code Mode's `code.run`, tool discovery, a shadow policy, replay) asks through here. A policy
 * that cannot decide (an evaluation error, a builtin's error, a timeout, an undefined or
 * malformed answer, no policy loaded) denies, and the failure is kept beside the deny for the log.
 */
import type { PolicyDecision, PolicyInput } from "../core/types.ts";
import type { EvaluatedDecision, PolicyDecider } from "./decider.ts";
import { PolicyFailure } from "./errors.ts";

export interface FailClosedEvaluation {
  /** The policy's decision, or the deny that stands for it when it could not decide. */
  decision: PolicyDecision;
  revision: string;
  /** Why the policy could not decide (then `decision` is the fail-closed deny). */
  failure: PolicyFailure | undefined;
  /** Time the evaluation took, failed or not. */
  evalNs: number;
}

/** What was being decided, for the model-facing reason of a fail-closed deny. */
export type Decided = "call" | "approval";

type Engine = Pick<PolicyDecider, "evaluate" | "evaluateStored" | "revision">;

/** Evaluates `input` with `engine`, failing closed. */
export function evaluateFailClosed(
  engine: Engine,
  input: PolicyInput,
  what: Decided = "call",
): FailClosedEvaluation {
  return failClosed(engine, () => engine.evaluate(input), what);
}

/** The same for an input read back from the decision log (any JSON value: redacted, older). */
export function evaluateStoredFailClosed(engine: Engine, input: unknown): FailClosedEvaluation {
  return failClosed(engine, () => engine.evaluateStored(input), "call");
}

function failClosed(engine: Engine, evaluate: () => EvaluatedDecision, what: Decided): FailClosedEvaluation {
  const started = process.hrtime.bigint();
  try {
    const { decision, revision } = evaluate();
    return { decision, revision, failure: undefined, evalNs: Number(process.hrtime.bigint() - started) };
  } catch (error) {
    if (!(error instanceof PolicyFailure)) throw error;
    return {
      decision: failedClosed(error, what),
      revision: engine.revision ?? "none",
      failure: error,
      evalNs: Number(process.hrtime.bigint() - started),
    };
  }
}

/**
 * The deny a failed evaluation stands for: the failure (for the log, not the model) and a reason
 * the model may see.
 */
export function failedClosed(failure: PolicyFailure, what: Decided = "call"): PolicyDecision {
  return {
    decision: "deny",
    reasons: [
      { code: failure.code, message: failure.message, visible_to_model: false },
      {
        code: "policy_unavailable",
        message: `the policy could not decide this ${what}, so it is denied`,
        visible_to_model: true,
      },
    ],
    conditions: [],
  };
}
