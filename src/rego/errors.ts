/**
 * Errors the Rego toolchain reports to policy authors. They follow OPA's shape and codes so that
 * messages read like `policy.rego:3:12: rego_parse_error: unexpected } token: expected term`.
 */

export type RegoErrorCode =
  | "rego_parse_error"
  | "rego_compile_error"
  | "rego_unsafe_var_error"
  | "rego_recursion_error"
  | "rego_type_error"
  | "rego_format_error"
  | "eval_conflict_error"
  | "eval_type_error"
  | "eval_builtin_error"
  | "eval_internal_error";

/** A position in a source file. `line` and `col` are 1-based, `offset` is a 0-based UTF-16 index. */
export interface Location {
  file: string;
  line: number;
  col: number;
  offset: number;
}

export class RegoError extends Error {
  readonly code: RegoErrorCode;
  readonly location: Location | undefined;
  /** The message without the location and code prefix. */
  readonly detail: string;

  constructor(code: RegoErrorCode, detail: string, location?: Location) {
    super(formatRegoError(code, detail, location));
    this.name = "RegoError";
    this.code = code;
    this.detail = detail;
    this.location = location;
  }
}

export function formatRegoError(code: RegoErrorCode, detail: string, location?: Location): string {
  if (!location) return `${code}: ${detail}`;
  return `${location.file}:${location.line}:${location.col}: ${code}: ${detail}`;
}

/** Thrown by a stage that collected one or more errors; `errors` are in source order. */
export class RegoErrors extends Error {
  readonly errors: RegoError[];

  constructor(errors: RegoError[]) {
    super(
      errors.length === 1
        ? errors[0]!.message
        : `${errors.length} errors occurred:\n${errors.map((e) => e.message).join("\n")}`,
    );
    this.name = "RegoErrors";
    this.errors = errors;
  }
}
