/**
 * Strict JSON, read the same way at every entrance (HTTP API bodies, `/mcp` bodies, arguments that
 * arrive as text): one JSON document in which no object repeats a key and no key is `__proto__`.
 *
 * - `JSON.parse` silently keeps the last of two equal keys; other parsers keep the first, so a
 *   payload with both could be authorized on one value and executed on the other.
 * - `JSON.parse` makes `__proto__` an own property, but code that copies objects by assignment
 *   (zod, many backends) turns it into the prototype or drops it: what was checked is not what runs.
 *
 * `constructor` and `prototype` are ordinary keys. The checks scan the text once after `JSON.parse`
 * has accepted it, so the grammar is exactly JSON's.
 */
import type { FieldError } from "../../core/errors.ts";
import { pointerTo } from "./problems.ts";

/** A key that strict JSON refuses, with a JSON Pointer to where it occurs in the document. */
export interface KeyProblem {
  kind: "duplicate" | "proto";
  key: string;
  pointer: string;
}

export type StrictJson =
  | { ok: true; value: unknown }
  | { ok: false; reason: "syntax"; message: string }
  /** Valid JSON with refused keys; `value` is what `JSON.parse` made of it (for logging only). */
  | { ok: false; reason: "keys"; problems: KeyProblem[]; value: unknown };

/** `text` read as strict JSON. */
export function parseStrictJson(text: string): StrictJson {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: "syntax", message: error instanceof Error ? error.message : String(error) };
  }
  const problems = findKeyProblems(text);
  return problems.length === 0 ? { ok: true, value } : { ok: false, reason: "keys", problems, value };
}

/** What is wrong with a refused key, for a field error at its pointer. */
export function describeKeyProblem(problem: KeyProblem): string {
  return problem.kind === "duplicate"
    ? `the key ${JSON.stringify(problem.key)} appears twice in one object; each key may appear once per object`
    : 'the key "__proto__" is not accepted: it would set an object\'s prototype instead of a field';
}

/** The refused keys as field errors, their pointers rooted at `base`. */
export function keyFieldErrors(problems: readonly KeyProblem[], base = ""): FieldError[] {
  return problems.map((problem) => ({
    path: `${base}${problem.pointer}`,
    message: describeKeyProblem(problem),
  }));
}

/** What to do about refused keys. */
export const KEY_PROBLEM_FIX =
  'send each key once per object and no "__proto__" key: remove or rename the keys listed in field_errors';

interface Frame {
  kind: "object" | "array";
  /** An object's keys so far (an array has none). */
  keys: Set<string> | undefined;
  /** The key of the value being read in an object. */
  token: string;
  /** The index of the value being read in an array. */
  index: number;
  expectingKey: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** The JSON Pointer token of the value being read in `frame`. */
function tokenOf(frame: Frame): string {
  return frame.kind === "array" ? String(frame.index) : frame.token;
}

/**
 * At most this many refused keys are reported: each pointer is as long as its depth, so a body
 * nesting `{"__proto__":` 16 000 deep would otherwise build gigabytes of pointers (the process ran
 * out of memory). The first ones are enough to fix the body.
 */
export const MAX_KEY_PROBLEMS = 20;

/**
 * The first `MAX_KEY_PROBLEMS` repeated keys and `__proto__` keys in `text`, which must be valid
 * JSON, in document order. Keys are compared after unescaping (`"\u0061"` is `"a"`).
 */
export function findKeyProblems(text: string): KeyProblem[] {
  const problems: KeyProblem[] = [];
  const stack: Frame[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text.charCodeAt(i);
    if (char === QUOTE) {
      let end = i + 1;
      let escaped = false;
      for (let c = text.charCodeAt(end); c !== QUOTE; c = text.charCodeAt(end)) {
        if (c === BACKSLASH) {
          escaped = true;
          end += 2;
        } else end += 1;
      }
      const top = stack.at(-1);
      if (top?.kind === "object" && top.expectingKey) {
        // A key without escapes is its text; only an escaped one needs JSON's unescaping.
        const key: unknown = escaped ? JSON.parse(text.slice(i, end + 1)) : text.slice(i + 1, end);
        if (typeof key === "string") {
          // The pointer walks the whole stack: built only for a refused key, or every key of a
          // deeply nested body would cost its depth (quadratic; 16 000 levels blocked ~30 s).
          const pointer = () =>
            pointerTo(
              stack.slice(0, -1).reduce((parent, frame) => pointerTo(parent, tokenOf(frame)), ""),
              key,
            );
          const keys = top.keys ?? new Set<string>();
          if (key === "__proto__") problems.push({ kind: "proto", key, pointer: pointer() });
          else if (keys.has(key)) problems.push({ kind: "duplicate", key, pointer: pointer() });
          keys.add(key);
          top.keys = keys;
          top.token = key;
        }
        top.expectingKey = false;
        if (problems.length >= MAX_KEY_PROBLEMS) return problems;
      }
      i = end + 1;
      continue;
    }
    if (char === OPEN_BRACE)
      stack.push({ kind: "object", keys: undefined, token: "", index: 0, expectingKey: true });
    else if (char === OPEN_BRACKET)
      stack.push({ kind: "array", keys: undefined, token: "", index: 0, expectingKey: false });
    else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) stack.pop();
    else if (char === COMMA) {
      const top = stack.at(-1);
      if (top?.kind === "object") top.expectingKey = true;
      else if (top?.kind === "array") top.index += 1;
    }
    i += 1;
  }
  return problems;
}
