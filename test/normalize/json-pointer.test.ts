import { describe, expect, it } from "vitest";
import { formatPointer, parsePointer, resolvePointer } from "../../src/normalize/index.ts";

// The example document of RFC 6901 section 5.
const document = {
  foo: ["bar", "baz"],
  "": 0,
  "a/b": 1,
  "c%d": 2,
  "e^f": 3,
  "g|h": 4,
  "i\\j": 5,
  'k"l': 6,
  " ": 7,
  "m~n": 8,
};

describe("JSON Pointer", () => {
  it("resolves the RFC 6901 examples", () => {
    const cases: [string, unknown][] = [
      ["", document],
      ["/foo", ["bar", "baz"]],
      ["/foo/0", "bar"],
      ["/", 0],
      ["/a~1b", 1],
      ["/c%d", 2],
      ["/e^f", 3],
      ["/g|h", 4],
      ["/i\\j", 5],
      ['/k"l', 6],
      ["/ ", 7],
      ["/m~0n", 8],
    ];
    for (const [pointer, value] of cases)
      expect(resolvePointer(document, pointer)).toEqual({ found: true, value });
  });

  it("finds nothing for missing keys, bad array indexes, inherited properties and bad escapes", () => {
    for (const pointer of [
      "/bar",
      "/foo/2",
      "/foo/-",
      "/foo/01",
      "/foo/x",
      "/foo/0/length",
      "/toString",
      "/m~2n",
      "foo",
    ]) {
      expect(resolvePointer(document, pointer), pointer).toEqual({ found: false });
    }
  });

  it("unescapes ~1 before ~0, and formats back", () => {
    expect(parsePointer("/~01")).toEqual(["~1"]);
    expect(parsePointer("/a~1b/m~0n")).toEqual(["a/b", "m~n"]);
    expect(formatPointer(["~1", "a/b"])).toBe("/~01/a~1b");
    expect(parsePointer("/a~")).toBeUndefined();
  });
});
