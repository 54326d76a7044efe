/**
 * One home for JSON Pointer tokens and zod failures as field errors (issue 28): every pointer Writ
 * builds escapes a token the same way, and parsing it back gives the key it was built from.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fieldErrorsFromZod, problemsFromZod } from "../../src/core/field-errors.ts";
import { atPointer, formatPointer, parsePointer } from "../../src/core/json-pointer.ts";

describe("JSON Pointer tokens", () => {
  it("round-trips any keys through formatPointer and parsePointer", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: fc.constantFrom("a", "/", "~", "0", "1", "") })), (keys) => {
        expect(parsePointer(formatPointer(keys))).toEqual(keys);
      }),
    );
  });

  it("escapes ~ before / so that a key ~1 stays a key ~1", () => {
    expect(formatPointer(["~1", "a/b", 0])).toBe("/~01/a~1b/0");
    expect(atPointer({ "~1": { "a/b": ["x"] } }, "/~01/a~1b/0")).toBe("x");
  });
});

describe("zod failures as field errors", () => {
  const schema = z.object({ "a/b": z.object({ "~": z.string(), "": z.number() }) }).strict();

  it("points at the failing key, escaped, under the prefix", () => {
    const parsed = schema.safeParse({ "a/b": { "~": 1, "": 2 } });
    expect(parsed.success).toBe(false);
    if (parsed.success) return;
    expect(fieldErrorsFromZod(parsed.error, "/body").map((e) => e.path)).toEqual(["/body/a~1b/~0"]);
  });

  it("keeps an empty key as its own token rather than pointing at its parent", () => {
    const parsed = schema.safeParse({ "a/b": { "~": "x", "": "two" } });
    expect(parsed.success).toBe(false);
    if (parsed.success) return;
    expect(fieldErrorsFromZod(parsed.error).map((e) => e.path)).toEqual(["/a~1b/"]);
    expect(problemsFromZod(parsed.error, { "a/b": { "~": "x", "": "two" } }, "").map((e) => e.path)).toEqual([
      "/a~1b/",
    ]);
  });
});
