/**
 * Tool-call arguments as Writ accepts them: a JSON object, and nothing a later stage could read two
 * ways. Arguments that arrive as text (OpenAI) must be exactly one JSON document; no text around
 * it is skipped or repaired.
 */
import { type Problems, pointerTo } from "./problems.ts";

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
 * text must be one JSON document, an object, with no key repeated in any object.
 */
export function readArgumentsText(
  text: string,
  at: string,
  problems: Problems,
): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    problems.add(at, `arguments are not valid JSON (${reason}); expected a JSON object encoded as a string`);
    return undefined;
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined) {
    problems.add(at, `arguments repeat the key ${duplicate}; each key may appear once per object`);
    return undefined;
  }
  return readArgumentsObject(value, at, problems);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return "a string";
  return `a ${typeof value}`;
}

interface Frame {
  kind: "object" | "array";
  keys: Set<string>;
  /** The key or index of the value being read in this container. */
  token: string;
  index: number;
  expectingKey: boolean;
}

/**
 * The first repeated object key in `text` (valid JSON), as `"key" at /pointer`, or undefined.
 * `JSON.parse` silently keeps the last of two equal keys; other parsers keep the first, so a
 * payload with both could be authorized on one value and executed on the other.
 */
export function findDuplicateKey(text: string): string | undefined {
  const stack: Frame[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i];
    if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      const top = stack.at(-1);
      if (top?.kind === "object" && top.expectingKey) {
        const key: unknown = JSON.parse(text.slice(i, end + 1));
        if (typeof key !== "string") return undefined;
        const parent = stack.slice(0, -1).reduce((pointer, frame) => pointerTo(pointer, frame.token), "");
        if (top.keys.has(key)) return `${JSON.stringify(key)} at ${pointerTo(parent, key)}`;
        top.keys.add(key);
        top.token = key;
        top.expectingKey = false;
      }
      i = end + 1;
      continue;
    }
    if (char === "{")
      stack.push({ kind: "object", keys: new Set(), token: "", index: 0, expectingKey: true });
    else if (char === "[")
      stack.push({ kind: "array", keys: new Set(), token: "0", index: 0, expectingKey: false });
    else if (char === "}" || char === "]") stack.pop();
    else if (char === ",") {
      const top = stack.at(-1);
      if (top?.kind === "object") top.expectingKey = true;
      else if (top?.kind === "array") {
        top.index += 1;
        top.token = String(top.index);
      }
    }
    i += 1;
  }
  return undefined;
}
