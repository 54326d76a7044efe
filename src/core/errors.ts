/**
 * The error protocol (DESIGN section 7). Every error a caller can see is a `WritError`: a
 * category, whether retrying can help, a message, field errors, a suggested fix, and whether the
 * side effect happened.
 */
import { z } from "zod";
import { bounded, NAME_LIMIT } from "./bounded.ts";
import { type FieldError, fieldErrorSchema } from "./field-errors.ts";

export const errorCategories = [
  "invalid_argument",
  "unknown_tool",
  "unauthenticated",
  "policy_denied",
  "approval_required",
  "approval_expired",
  "stale_revision",
  "conflict",
  "rate_limited",
  "backend_unavailable",
  "timeout",
  "internal",
  "forbidden",
  "not_found",
  "payload_too_large",
  /** The backend ran the tool and the tool reported its own failure (MCP `isError`). */
  "tool_error",
  /** The backend answered outside its protocol: a JSON-RPC error, a malformed answer. */
  "backend_error",
] as const;

export type ErrorCategory = (typeof errorCategories)[number];

export { type FieldError, fieldErrorSchema, fieldErrorsFromZod } from "./field-errors.ts";

export const writErrorSchema = z.object({
  status: z.literal("failed"),
  category: z.enum(errorCategories),
  retryable: z.boolean(),
  message: z.string(),
  field_errors: z.array(fieldErrorSchema),
  suggested_fix: z.string(),
  effect_committed: z.union([z.boolean(), z.literal("unknown")]),
  /** Seconds after which the same call can succeed (a `rate_limited` refusal; HTTP `Retry-After`). */
  retry_after: z.number().int().min(1).optional(),
  /**
   * Every OAuth scope the refused operation needs, when the policy refused it for want of one
   * (step-up; HTTP `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`).
   */
  required_scopes: z.array(z.string()).min(1).optional(),
});
export type WritErrorBody = z.infer<typeof writErrorSchema>;

/** HTTP status for each category when the error is the whole answer. */
export const httpStatusOf: Record<ErrorCategory, number> = {
  invalid_argument: 400,
  unknown_tool: 404,
  unauthenticated: 401,
  policy_denied: 403,
  approval_required: 202,
  approval_expired: 410,
  stale_revision: 409,
  conflict: 409,
  rate_limited: 429,
  backend_unavailable: 503,
  timeout: 504,
  internal: 500,
  forbidden: 403,
  not_found: 404,
  payload_too_large: 413,
  tool_error: 422,
  backend_error: 502,
};

const retryableByDefault = new Set<ErrorCategory>(["rate_limited", "backend_unavailable", "timeout"]);

export class WritError extends Error {
  readonly category: ErrorCategory;
  readonly retryable: boolean;
  readonly fieldErrors: FieldError[];
  readonly suggestedFix: string;
  readonly effectCommitted: boolean | "unknown";
  /** Seconds after which the same call can succeed (a limit's bucket has room again). */
  readonly retryAfter: number | undefined;
  /** Every scope the operation needs (a `policy_denied` step-up refusal). */
  readonly requiredScopes: readonly string[] | undefined;

  constructor(
    category: ErrorCategory,
    message: string,
    options: {
      suggestedFix: string;
      fieldErrors?: FieldError[];
      retryable?: boolean;
      effectCommitted?: boolean | "unknown";
      retryAfter?: number;
      requiredScopes?: readonly string[];
      cause?: unknown;
    },
  ) {
    super(bounded(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "WritError";
    this.category = category;
    this.retryable = options.retryable ?? retryableByDefault.has(category);
    this.fieldErrors = (options.fieldErrors ?? []).map((field) => ({
      path: bounded(field.path, NAME_LIMIT),
      message: bounded(field.message),
    }));
    this.suggestedFix = options.suggestedFix;
    this.effectCommitted = options.effectCommitted ?? false;
    this.retryAfter =
      options.retryAfter === undefined ? undefined : Math.max(1, Math.ceil(options.retryAfter));
    this.requiredScopes = options.requiredScopes;
  }

  /**
   * The error as callers see it: a WritError as it is, anything else an `internal` one whose
   * cause is kept for the operator (the message and fix say what the caller can do).
   */
  static from(
    error: unknown,
    internal: { message: string; suggestedFix: string } = {
      message: "Writ failed while handling the call",
      suggestedFix: "retry later; if it persists, report the decision id to the operator",
    },
  ): WritError {
    if (error instanceof WritError) return error;
    return new WritError("internal", internal.message, { suggestedFix: internal.suggestedFix, cause: error });
  }

  toJSON(): WritErrorBody {
    return {
      status: "failed",
      category: this.category,
      retryable: this.retryable,
      message: this.message,
      field_errors: this.fieldErrors,
      suggested_fix: this.suggestedFix,
      effect_committed: this.effectCommitted,
      ...(this.retryAfter === undefined ? {} : { retry_after: this.retryAfter }),
      ...(this.requiredScopes === undefined ? {} : { required_scopes: [...this.requiredScopes] }),
    };
  }

  get httpStatus(): number {
    return httpStatusOf[this.category];
  }
}

/**
 * The message of anything thrown: an Error's message, a thrown string (the opa-wasm SDK throws
 * strings for aborts), or an object's `message` field.
 */
export function errorMessage(error: unknown): string {
  if (typeof error === "string") return error;
  if (error instanceof Error) return error.message;
  if (
    error !== null &&
    typeof error === "object" &&
    "message" in error &&
    typeof error.message === "string"
  ) {
    return error.message;
  }
  return String(error);
}
