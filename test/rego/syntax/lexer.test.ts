import { describe, expect, it } from "vitest";
import {
  COL,
  END,
  KIND_AND_FLAGS,
  LINE,
  NL_BEFORE,
  START,
  TOKEN_NAMES,
  TOKEN_STRIDE,
  type TokenStream,
  tokenize,
  WS_BEFORE,
} from "../../../src/rego/syntax/lexer.ts";

interface ScannedToken {
  kind: string;
  text: string;
  line: number;
  col: number;
  space: boolean;
  newline: boolean;
}

function scan(source: string): ScannedToken[] {
  const stream: TokenStream = tokenize(source, "l.rego");
  const tokens: ScannedToken[] = [];
  for (let i = 0; i < stream.count; i++) {
    const at = i * TOKEN_STRIDE;
    const kindAndFlags = stream.tokens[at + KIND_AND_FLAGS]!;
    const flags = kindAndFlags >> 8;
    tokens.push({
      kind: TOKEN_NAMES[kindAndFlags & 0xff]!,
      text: source.slice(stream.tokens[at + START], stream.tokens[at + END]),
      line: stream.tokens[at + LINE]!,
      col: stream.tokens[at + COL]!,
      space: (flags & WS_BEFORE) !== 0,
      newline: (flags & NL_BEFORE) !== 0,
    });
  }
  return tokens;
}

const kinds = (source: string) => scan(source).map((t) => t.kind);

describe("tokenize", () => {
  it("scans OPA's token kinds", () => {
    expect(kinds("x := y == z != 1 <= 2 >= 3 < 4 > 5")).toEqual([
      "identifier",
      "assign",
      "identifier",
      "equal",
      "identifier",
      "neq",
      "number",
      "lte",
      "number",
      "gte",
      "number",
      "lt",
      "number",
      "gt",
      "number",
      "eof",
    ]);
    expect(kinds("+ - * / % & | = : ; , . ( ) [ ] { }")).toEqual([
      "plus",
      "minus",
      "mul",
      "div",
      "rem",
      "and",
      "or",
      "eq",
      ":",
      ";",
      ",",
      ".",
      "(",
      ")",
      "[",
      "]",
      "{",
      "}",
      "eof",
    ]);
    expect(
      kinds("package import as default else not some with null true false in every contains if"),
    ).toEqual([
      "package",
      "import",
      "as",
      "default",
      "else",
      "not",
      "some",
      "with",
      "null",
      "true",
      "false",
      "in",
      "every",
      "contains",
      "if",
      "eof",
    ]);
  });

  it("scans numbers without their sign, and names with Unicode digits", () => {
    expect(scan("-1.5e+3 x١").map((t) => t.text)).toEqual(["-", "1.5e+3", "x١", ""]);
  });

  it("records whitespace and newlines before each token", () => {
    const tokens = scan("a.b [c]\n# note\nd");
    expect(tokens.map((t) => [t.text, t.space, t.newline])).toEqual([
      ["a", false, false],
      [".", false, false],
      ["b", false, false],
      ["[", true, false],
      ["c", false, false],
      ["]", false, false],
      ["d", true, true],
      ["", false, false],
    ]);
  });

  it("tracks lines and code-point columns, including inside raw strings", () => {
    const tokens = scan('x\n  "é😀" y\n`a\nb` z');
    expect(tokens.map((t) => [t.text, t.line, t.col])).toEqual([
      ["x", 1, 1],
      ['"é😀"', 2, 3],
      ["y", 2, 8],
      ["`a\nb`", 3, 1],
      ["z", 4, 4],
      ["", 4, 5],
    ]);
  });

  it("collects comments without the leading # or a trailing carriage return", () => {
    const stream = tokenize("# one\r\nx # two", "l.rego");
    expect(stream.comments.map((c) => [c.text, c.loc.line, c.loc.col])).toEqual([
      [" one", 1, 1],
      [" two", 2, 3],
    ]);
  });

  it("turns malformed input into illegal tokens carrying OPA's messages", () => {
    const stream = tokenize('"open\n1.x 1e ! $ @ "\\q"', "l.rego");
    expect([...(stream.errors?.values() ?? [])]).toEqual([
      ["non-terminated string"],
      ["expected fraction", "illegal number format"],
      ["expected exponent"],
      ["illegal ! character"],
      ["illegal $ character"],
      ["illegal escape sequence"],
    ]);
    expect(kinds('"open\n1.x 1e ! $ @ "\\q"').filter((k) => k === "illegal")).toHaveLength(7);
  });

  it("skips a leading byte-order mark", () => {
    expect(scan("\ufeffx")[0]).toMatchObject({ text: "x", col: 1 });
  });
});
