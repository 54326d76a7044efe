/**
 * Why a grant was refused. Every `GrantError` carries a stable `code` a backend can branch on and
 * a message that says what the caller should do next.
 */

/** Codes where the grant itself is not acceptable as a credential (HTTP 401). */
const credentialCodes = [
  "missing_grant",
  "malformed",
  "bad_signature",
  "alg_not_allowed",
  "wrong_type",
  "wrong_issuer",
  "wrong_audience",
  "expired",
  "not_yet_valid",
] as const;

export const grantErrorCodes = [
  ...credentialCodes,
  "action_mismatch",
  "resource_mismatch",
  "args_mismatch",
  "replayed",
  /** The resource moved to another revision since the decision the grant carries (`res.rev`). */
  "stale_revision",
  "unknown_condition",
  /** The verification could not be completed (key set unreachable, replay store failing). */
  "unavailable",
] as const;

export type GrantErrorCode = (typeof grantErrorCodes)[number];

export class GrantError extends Error {
  readonly code: GrantErrorCode;
  /** What was wrong, without the advice. */
  readonly problem: string;
  /** What the caller should do next. */
  readonly suggestedFix: string;

  /** The message is `problem; suggestedFix`. */
  constructor(code: GrantErrorCode, problem: string, suggestedFix: string, options?: { cause?: unknown }) {
    super(`${problem}; ${suggestedFix}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "GrantError";
    this.code = code;
    this.problem = problem;
    this.suggestedFix = suggestedFix;
  }
}

const credentialCodeSet: ReadonlySet<GrantErrorCode> = new Set(credentialCodes);

/** How a refusal is answered over HTTP: status and WritError category. */
export function grantErrorDisposition(code: GrantErrorCode): {
  status: 401 | 403 | 409 | 503;
  category: "unauthenticated" | "policy_denied" | "backend_unavailable" | "stale_revision";
} {
  if (code === "unavailable") return { status: 503, category: "backend_unavailable" };
  if (code === "stale_revision") return { status: 409, category: "stale_revision" };
  if (credentialCodeSet.has(code)) return { status: 401, category: "unauthenticated" };
  return { status: 403, category: "policy_denied" };
}
