/**
 * Reading a request: its JSON body and its parameters, checked with zod. Every failure is an
 * `invalid_argument` WritError whose field errors point into what the caller sent.
 */
import type { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import { bodyText } from "../core/request-body.ts";
import { KEY_PROBLEM_FIX, keyFieldErrors, parseStrictJson } from "../intake/index.ts";

export interface JsonBodyOptions {
  /** An empty body is `{}`. */
  optional?: boolean;
  /**
   * Called before a body with refused keys is refused, with what `JSON.parse` made of it, so that
   * the route can log the calls it carried.
   */
  onRefused?: (value: unknown, error: WritError) => Promise<void>;
}

/**
 * The request body read as strict JSON (see src/intake/lib/strict-json.ts): a repeated key or a
 * `__proto__` key anywhere is refused with a field error at its JSON Pointer.
 */
export async function jsonBody(req: Request, options: JsonBodyOptions = {}): Promise<unknown> {
  const text = await bodyText(req);
  if (options.optional && text.trim() === "") return {};
  const parsed = parseStrictJson(text);
  if (parsed.ok) return parsed.value;
  if (parsed.reason === "syntax") {
    throw new WritError("invalid_argument", "the request body is not JSON", {
      fieldErrors: [{ path: "", message: parsed.message }],
      suggestedFix: "send a JSON body with Content-Type: application/json",
    });
  }
  const fieldErrors = keyFieldErrors(parsed.problems);
  const error = new WritError(
    "invalid_argument",
    `the request body repeats a key or uses "__proto__" (first at ${fieldErrors[0]?.path ?? "/"})`,
    { fieldErrors, suggestedFix: KEY_PROBLEM_FIX },
  );
  await options.onRefused?.(parsed.value, error);
  throw error;
}

/** `value` checked against `schema`; `prefix` roots the field errors' paths, `what` names the value. */
export function parseWith<T extends z.ZodType>(
  schema: T,
  value: unknown,
  prefix: string,
  what: string,
): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new WritError("invalid_argument", `${what} is malformed`, {
      fieldErrors: fieldErrorsFromZod(parsed.error, prefix),
      suggestedFix: "fix the fields listed in field_errors",
    });
  }
  return parsed.data;
}
