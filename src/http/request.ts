/**
 * Reading a request: its JSON body and its parameters, checked with zod. Every failure is an
 * `invalid_argument` WritError whose field errors point into what the caller sent.
 */
import type { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";

/** The request body parsed as JSON; with `optional`, an empty body is `{}`. */
export async function jsonBody(req: Request, options: { optional?: boolean } = {}): Promise<unknown> {
  const text = await req.text();
  if (options.optional && text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new WritError("invalid_argument", "the request body is not JSON", {
      suggestedFix: "send a JSON body with Content-Type: application/json",
    });
  }
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
