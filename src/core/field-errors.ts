/**
 * Field errors: what is wrong with a document, each at a JSON Pointer into it. The one place a
 * zod failure becomes the `field_errors` of a structured error: `fieldErrorsFromZod` keeps zod's
 * messages (configuration, stored rows, request parameters); `problemsFromZod` says what arrived
 * instead (a payload a caller sent, a contract file), one error per unknown field.
 */
import { z } from "zod";
import { formatPointer } from "./json-pointer.ts";

export const fieldErrorSchema = z.object({
  /** JSON Pointer into the offending document (`/payload/choices/0/message`). */
  path: z.string(),
  message: z.string(),
});
export type FieldError = z.infer<typeof fieldErrorSchema>;

/** A JSON Pointer to `tokens` under `base`. */
export function pointerTo(base: string, ...tokens: (string | number)[]): string {
  return base + formatPointer(tokens);
}

/** Field errors from a zod error, with zod's messages and paths as JSON Pointers under `prefix`. */
export function fieldErrorsFromZod(error: z.ZodError, prefix = ""): FieldError[] {
  return error.issues.map((issue) => ({
    path: pointerTo(prefix, ...issue.path.map(String)),
    message: issue.message,
  }));
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = Reflect.get(current, key);
  }
  return current;
}

/**
 * Field errors for a zod failure on `input`, found at `base` in the payload. Unknown fields get
 * one error each, at the field itself; type errors say what arrived.
 */
export function problemsFromZod(error: z.ZodError, input: unknown, base: string): FieldError[] {
  const problems: FieldError[] = [];
  for (const issue of error.issues) {
    const at = pointerTo(base, ...issue.path.map((key) => String(key)));
    switch (issue.code) {
      case "unrecognized_keys":
        for (const key of issue.keys)
          problems.push({ path: pointerTo(at, key), message: `unknown field "${key}"` });
        break;
      case "invalid_type": {
        const received = valueAt(input, issue.path);
        problems.push({
          path: at,
          message:
            received === undefined
              ? `required field is missing${issue.expected === "nonoptional" ? "" : ` (expected ${issue.expected})`}`
              : `expected ${issue.expected}, got ${describeType(received)}`,
        });
        break;
      }
      case "invalid_value":
        problems.push({
          path: at,
          message: `must be ${issue.values.map((value) => JSON.stringify(value)).join(" or ")}, got ${JSON.stringify(valueAt(input, issue.path)) ?? "nothing"}`,
        });
        break;
      case "invalid_key":
        problems.push({ path: at, message: issue.issues.map((inner) => inner.message).join("; ") });
        break;
      default:
        problems.push({ path: at, message: issue.message });
    }
  }
  return problems;
}
