/** How a policy fails: at load (PolicyLoadError) or at evaluation (PolicyFailure, denied). */
/** Why a policy gave no usable decision; the pipeline denies with this reason. */
export class PolicyFailure extends Error {
  constructor(
    readonly code:
      | "policy_undefined"
      | "policy_malformed"
      | "policy_error"
      | "policy_builtin_error"
      | "policy_too_slow"
      | "policy_unavailable"
      | "history_unavailable",
    message: string,
    /** The builtin whose error failed the evaluation (`policy_builtin_error`). */
    readonly builtin?: string,
  ) {
    super(message);
    this.name = "PolicyFailure";
  }
}

/** Compile-time problems of a policy folder, with OPA-style messages. */
export class PolicyLoadError extends Error {
  constructor(
    message: string,
    readonly details: string[],
  ) {
    super(details.length > 0 ? `${message}:\n${details.join("\n")}` : message);
    this.name = "PolicyLoadError";
  }
}

/**
 * A failure inside the module as the pipeline logs it. A builtin's error under strict builtin
 * errors (`eval_builtin_error: regex.match: …`) is named as such, with the builtin that failed.
 */
export function evaluationFailure(error: unknown): PolicyFailure {
  const message = typeof error === "string" ? error : error instanceof Error ? error.message : String(error);
  const builtin = /\b(eval_[a-z_]+_error): ([A-Za-z_][\w.]*): /.exec(message);
  if (builtin !== null) {
    return new PolicyFailure(
      "policy_builtin_error",
      `the builtin ${builtin[2]} failed while the policy was evaluated (${builtin[1]}): ${message.slice(builtin.index + builtin[0].length)}`,
      builtin[2],
    );
  }
  return new PolicyFailure("policy_error", `the policy failed while evaluating: ${message}`);
}
