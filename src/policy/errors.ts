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
      | "policy_unavailable",
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
