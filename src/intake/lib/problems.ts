/**
 * Field errors collected while reading a payload, with JSON Pointers into that payload. Adapters
 * keep going after the first problem so that one answer lists everything that is wrong.
 */
import type { z } from "zod";
import type { FieldError } from "../../core/errors.ts";

/** A JSON Pointer to `tokens` under `base` (RFC 6901: `~` is written `~0`, `/` is written `~1`). */
export function pointerTo(base: string, ...tokens: (string | number)[]): string {
  return tokens.reduce<string>(
    (pointer, token) => `${pointer}/${String(token).replaceAll("~", "~0").replaceAll("/", "~1")}`,
    base,
  );
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

/** Where an adapter records what is wrong with a payload. */
export class Problems {
  readonly list: FieldError[] = [];

  add(path: string, message: string): void {
    this.list.push({ path, message });
  }

  /** Parses `input` (found at `base`) with `schema`; records the issues and returns undefined on failure. */
  parse<T extends z.ZodType>(schema: T, input: unknown, base: string): z.output<T> | undefined {
    const result = schema.safeParse(input);
    if (result.success) return result.data;
    this.list.push(...problemsFromZod(result.error, input, base));
    return undefined;
  }

  get empty(): boolean {
    return this.list.length === 0;
  }
}
