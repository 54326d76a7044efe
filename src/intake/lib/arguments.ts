/**
 * Tool-call arguments as Writ accepts them: a JSON object, and nothing a later stage could read two
 * ways. Arguments that arrive as text (OpenAI) must be exactly one JSON document; no text around
 * it is skipped or repaired.
 */
import { type Problems, pointerTo } from "./problems.ts";
import { describeKeyProblem, parseStrictJson } from "./strict-json.ts";

/** Deeper nesting than this is refused: no real tool needs it and it could exhaust the stack later. */
export const maxArgumentDepth = 64;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Records a problem for every part of `value` that is not plain JSON Writ can digest; true if none. */
function checkJsonValue(
  value: unknown,
  inner: string,
  at: string,
  depth: number,
  problems: Problems,
): boolean {
  const where = inner === "" ? "" : ` at ${inner}`;
  if (depth > maxArgumentDepth) {
    problems.add(at, `arguments nest deeper than ${maxArgumentDepth} levels${where}`);
    return false;
  }
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return true;
    problems.add(at, `number out of range${where}: JSON numbers must be finite doubles`);
    return false;
  }
  if (Array.isArray(value)) {
    return value.every((item, index) =>
      checkJsonValue(item, pointerTo(inner, index), at, depth + 1, problems),
    );
  }
  if (isPlainObject(value)) {
    return Object.entries(value).every(([key, item]) => {
      if (key === "__proto__") {
        problems.add(at, `the key "__proto__"${where} is not accepted in arguments`);
        return false;
      }
      return checkJsonValue(item, pointerTo(inner, key), at, depth + 1, problems);
    });
  }
  problems.add(at, `not a JSON value${where} (${typeof value})`);
  return false;
}

/**
 * The arguments object found at `at` in the payload, or undefined (with problems recorded) if it is
 * not a JSON object.
 */
export function readArgumentsObject(
  value: unknown,
  at: string,
  problems: Problems,
): Record<string, unknown> | undefined {
  if (!isPlainObject(value)) {
    problems.add(at, `arguments must be a JSON object, got ${describe(value)}`);
    return undefined;
  }
  return checkJsonValue(value, "", at, 1, problems) ? value : undefined;
}

/**
 * The arguments object encoded in `text` (found at `at`), or undefined with problems recorded: the
 * text must be one strict JSON document (see strict-json.ts), an object.
 */
export function readArgumentsText(
  text: string,
  at: string,
  problems: Problems,
): Record<string, unknown> | undefined {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) {
    if (parsed.reason === "syntax") {
      problems.add(
        at,
        `arguments are not valid JSON (${parsed.message}); expected a JSON object encoded as a string`,
      );
    } else {
      for (const problem of parsed.problems)
        problems.add(at, `arguments: at ${problem.pointer}, ${describeKeyProblem(problem)}`);
    }
    return undefined;
  }
  return readArgumentsObject(parsed.value, at, problems);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return "a string";
  return `a ${typeof value}`;
}
