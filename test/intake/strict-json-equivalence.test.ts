/**
 * The strict-JSON key scan against the implementation it replaced (kept below as the oracle):
 * for random JSON texts with repeated keys, `__proto__` keys, keys spelt with escapes, and strings
 * that look like keys, the problems found (kinds, keys, pointers, order) are the same.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findKeyProblems, type KeyProblem } from "../../src/intake/index.ts";
import { pointerTo } from "../../src/intake/lib/problems.ts";

/** A JSON document whose objects are lists of entries (so a key may repeat). */
type Doc = { object: [string, Doc][] } | { array: Doc[] } | { leaf: string };

const keyText = fc.oneof(
  fc.constantFrom("a", "b", "__proto__", "a/b", "x~", "", "\u00e9", '"q"', "\\"),
  fc.string({ maxLength: 4 }),
);
const { doc } = fc.letrec<{ doc: Doc; object: Doc; array: Doc; leaf: Doc }>((tie) => ({
  doc: fc.oneof({ depthSize: "small" }, tie("leaf"), tie("object"), tie("array")),
  object: fc.array(fc.tuple(keyText, tie("doc")), { maxLength: 5 }).map((object) => ({ object })),
  array: fc.array(tie("doc"), { maxLength: 4 }).map((array) => ({ array })),
  leaf: fc
    .oneof(fc.constantFrom('"a"', '"{\\"a\\": 1, \\"a\\": 2}"', "1", "true", "null", '"[,]"'), fc.json())
    .map((leaf) => ({ leaf })),
}));

/** `key` as JSON text: plain, or with every character escaped (`"\u0061"` is `"a"`). */
function keyJson(key: string, escaped: boolean): string {
  if (!escaped) return JSON.stringify(key);
  return `"${key
    .split("")
    .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    .join("")}"`;
}

function write(d: Doc, escapes: boolean[], space: string): string {
  if ("leaf" in d) return d.leaf;
  if ("array" in d)
    return `[${space}${d.array.map((item) => write(item, escapes, space)).join(`,${space}`)}]`;
  return `{${d.object
    .map(
      ([k, v], i) =>
        `${keyJson(k, escapes[i % escapes.length] ?? false)}${space}:${write(v, escapes, space)}`,
    )
    .join(",")}}`;
}

const texts = fc
  .tuple(doc, fc.array(fc.boolean(), { minLength: 1, maxLength: 3 }), fc.constantFrom("", " ", "\n\t"))
  .map(([d, escapes, space]) => write(d, escapes, space));

describe("findKeyProblems against the implementation it replaced", () => {
  it("finds the same problems in the same order", () => {
    fc.assert(
      fc.property(texts, (text) => {
        JSON.parse(text); // the scan's precondition: valid JSON
        expect(findKeyProblems(text)).toEqual(oldFindKeyProblems(text));
      }),
      { numRuns: 3000 },
    );
  });
});

// ------------------------------------------------------------ the oracle: the implementation replaced

interface Frame {
  kind: "object" | "array";
  keys: Set<string>;
  /** The key or index of the value being read in this container. */
  token: string;
  index: number;
  expectingKey: boolean;
}

/**
 * At most this many refused keys are reported: each pointer is as long as its depth, so a body
 * nesting `{"__proto__":` 16 000 deep would otherwise build gigabytes of pointers (the process ran
 * out of memory). The first ones are enough to fix the body.
 */
const MAX_KEY_PROBLEMS = 20;

/**
 * The first `MAX_KEY_PROBLEMS` repeated keys and `__proto__` keys in `text`, which must be valid
 * JSON, in document order. Keys are compared after unescaping (`"\u0061"` is `"a"`).
 */
function oldFindKeyProblems(text: string): KeyProblem[] {
  const problems: KeyProblem[] = [];
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
        if (typeof key === "string") {
          // The pointer walks the whole stack: built only for a refused key, or every key of a
          // deeply nested body would cost its depth (quadratic; 16 000 levels blocked ~30 s).
          const pointer = () =>
            pointerTo(
              stack.slice(0, -1).reduce((parent, frame) => pointerTo(parent, frame.token), ""),
              key,
            );
          if (key === "__proto__") problems.push({ kind: "proto", key, pointer: pointer() });
          else if (top.keys.has(key)) problems.push({ kind: "duplicate", key, pointer: pointer() });
          top.keys.add(key);
          top.token = key;
        }
        top.expectingKey = false;
        if (problems.length >= MAX_KEY_PROBLEMS) return problems;
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
  return problems;
}
