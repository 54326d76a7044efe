import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RegoError } from "../../../src/rego/errors.ts";
import { parseModule, parseQuery, parseTerm } from "../../../src/rego/syntax/index.ts";

function moduleErrors(source: string): string[] {
  const { module, errors } = parseModule(source, "policy.rego");
  expect(module).toBeUndefined();
  return errors.map((e) => e.message);
}

/** Errors of a module made of `package test` and `rules`, which start on line 2. */
function ruleErrors(rules: string): string[] {
  return moduleErrors(`package test\n${rules}`);
}

function queryErrors(source: string): string[] {
  const { body, errors } = parseQuery(source, "query.rego");
  expect(body).toBeUndefined();
  return errors.map((e) => e.message);
}

describe("syntax errors", () => {
  it("reports OPA's message and the offending token's position", () => {
    expect(ruleErrors("p if { x := }")).toEqual(["policy.rego:2:13: rego_parse_error: unexpected } token"]);
    expect(ruleErrors("p if { true; }")).toEqual(["policy.rego:2:14: rego_parse_error: unexpected } token"]);
    expect(ruleErrors("p if { a b }")).toEqual([
      "policy.rego:2:10: rego_parse_error: unexpected identifier token: expected \\n or ; or }",
    ]);
    expect(ruleErrors("p if {\n\tx := 1")).toEqual([
      "policy.rego:3:8: rego_parse_error: unexpected eof token: expected \\n or ; or }",
    ]);
  });

  it("reports errors inside terms", () => {
    expect(queryErrors("x := [1, 2")).toEqual([
      'query.rego:1:11: rego_parse_error: unexpected eof token: expected "," or "]"',
    ]);
    expect(queryErrors('x := {"a": 1 "b": 2}')).toEqual([
      "query.rego:1:14: rego_parse_error: unexpected string token: non-terminated object",
    ]);
    expect(queryErrors("x := f(x y)")).toEqual([
      'query.rego:1:10: rego_parse_error: unexpected identifier token: expected "," or ")"',
    ]);
    expect(queryErrors("x := x.  y")).toEqual([
      "query.rego:1:8: rego_parse_error: unexpected whitespace token: expected identifier",
    ]);
    expect(queryErrors("x := x[1")).toEqual([
      "query.rego:1:9: rego_parse_error: unexpected eof token: expected [",
    ]);
    expect(queryErrors("x := (1 + 2")).toEqual([
      "query.rego:1:12: rego_parse_error: non-terminated expression",
    ]);
    expect(queryErrors("x := {1 2}")).toEqual([
      "query.rego:1:9: rego_parse_error: unexpected number token: non-terminated set",
    ]);
  });

  it("also reports a missing rule value when a head's value fails, like OPA", () => {
    expect(ruleErrors("p := [1, 2")).toEqual([
      'policy.rego:2:11: rego_parse_error: unexpected eof token: expected "," or "]"',
      "policy.rego:2:11: rego_parse_error: unexpected eof token: expected rule value term (e.g., p := <VALUE> { ... })",
    ]);
    expect(ruleErrors("f(x) := }")).toEqual([
      "policy.rego:2:9: rego_parse_error: unexpected } token",
      "policy.rego:2:9: rego_parse_error: unexpected } token: expected function value term (e.g., f(...) := <VALUE> { ... })",
    ]);
  });

  it("reports scanner errors at the token, then the token as illegal", () => {
    expect(ruleErrors('p := "abc\nq := 1')).toEqual([
      "policy.rego:2:6: rego_parse_error: non-terminated string",
      "policy.rego:2:6: rego_parse_error: illegal token",
      "policy.rego:2:6: rego_parse_error: illegal token",
    ]);
    expect(ruleErrors("p := 01")).toEqual([
      "policy.rego:2:6: rego_parse_error: unexpected number token: expected number without leading zero",
      "policy.rego:2:6: rego_parse_error: unexpected number token: expected rule value term (e.g., p := <VALUE> { ... })",
    ]);
    expect(ruleErrors('p := "\\q"')[0]).toBe("policy.rego:2:6: rego_parse_error: illegal escape sequence");
    expect(ruleErrors('p := "\\u12zz"')[0]).toBe(
      'policy.rego:2:6: rego_parse_error: illegal string literal: "\\u12zz"',
    );
    expect(ruleErrors("p := 1e999999")[0]).toBe("policy.rego:2:6: rego_parse_error: number too big");
    expect(ruleErrors("p := 1.x")[0]).toBe("policy.rego:2:6: rego_parse_error: expected fraction");
  });

  it("rejects unary minus on anything but a number literal, as OPA does", () => {
    expect(queryErrors("x := -y")).toEqual([
      "query.rego:1:7: rego_parse_error: unexpected identifier token: expected number",
    ]);
  });

  it("rejects misplaced keywords and declarations", () => {
    expect(ruleErrors("p if { not some x }")).toEqual([
      "policy.rego:2:12: rego_parse_error: unexpected some keyword: illegal negation of 'some'",
    ]);
    expect(ruleErrors("p if { every x in xs }")).toEqual([
      "policy.rego:2:22: rego_parse_error: unexpected } token: missing body",
    ]);
    expect(ruleErrors("p if { every x in xs { true } with }")[0]).toBe(
      "policy.rego:2:36: rego_parse_error: unexpected } token: expected ident",
    );
    expect(ruleErrors("p if { x with y z }")).toEqual([
      "policy.rego:2:17: rego_parse_error: unexpected identifier token: expected as keyword",
    ]);
    expect(ruleErrors("p if { some f(x) }")).toEqual([
      "policy.rego:2:18: rego_parse_error: unexpected } token: expected `x in xs` or `x, y in xs` expression",
    ]);
    expect(ruleErrors("p if { x = 1 = 2 }")).toEqual([
      "policy.rego:2:14: rego_parse_error: unexpected eq token: expected \\n or ; or }",
    ]);
  });

  it("checks default rules like OPA", () => {
    expect(ruleErrors("default p := x")).toEqual([
      "policy.rego:2:1: rego_parse_error: illegal default rule (value cannot contain var)",
    ]);
    expect(ruleErrors("default p := [input.x, f(1)]")).toEqual([
      "policy.rego:2:1: rego_parse_error: illegal default rule (value cannot contain ref)",
      "policy.rego:2:1: rego_parse_error: illegal default rule (value cannot contain call)",
    ]);
    expect(ruleErrors("default p[x]")).toEqual([
      "policy.rego:2:1: rego_parse_error: illegal default rule (must have a value)",
    ]);
    expect(ruleErrors("default f(x, x) := 1")).toEqual([
      "policy.rego:2:1: rego_parse_error: illegal default rule (arguments cannot be repeated x)",
    ]);
  });

  it("checks else chains", () => {
    expect(ruleErrors("p[x] if { x := 1 } else := 2")).toEqual([
      "policy.rego:2:20: rego_parse_error: else keyword cannot be used on rules with variables in head",
    ]);
    expect(ruleErrors("p contains 1 if { true } else := 2")).toEqual([
      "policy.rego:2:26: rego_parse_error: else keyword cannot be used on multi-value rules",
    ]);
    expect(ruleErrors("p if { true } else")).toEqual([
      "policy.rego:2:19: rego_parse_error: unexpected eof token: expected else value term or rule body",
    ]);
  });

  it("checks imports and packages", () => {
    expect(moduleErrors("package a\nimport foo.bar")).toEqual([
      "policy.rego:2:8: rego_parse_error: unexpected import path, must begin with one of: {data, future, input, rego}, got: foo (hint: if this is unexpected, try updating OPA)",
    ]);
    expect(moduleErrors("package a\nimport rego.v3")).toEqual([
      "policy.rego:2:8: rego_parse_error: invalid import `rego.v3`, must be `rego.v1`",
    ]);
    expect(moduleErrors("package a\nimport future.keywords.foo")).toEqual([
      "policy.rego:2:8: rego_parse_error: unexpected keyword, must be one of [and contains every if in not or]",
    ]);
    expect(moduleErrors("package a\nimport data.x.if")).toEqual([
      "policy.rego:2:15: rego_parse_error: unexpected import path, must not end with a keyword, got: if",
    ]);
    expect(moduleErrors("package a[x]")).toEqual([
      "policy.rego:1:11: rego_parse_error: unexpected var token: expecting string",
    ]);
    expect(moduleErrors("p := 1")).toEqual(["policy.rego:1:1: rego_parse_error: package expected"]);
    expect(moduleErrors("package a\npackage b")).toEqual([
      "policy.rego:2:1: rego_parse_error: unexpected package",
    ]);
    expect(moduleErrors("")).toEqual(["policy.rego:1:1: rego_parse_error: empty module"]);
    expect(moduleErrors("# only a comment\n")).toEqual(["policy.rego:1:1: rego_parse_error: empty module"]);
  });

  it("returns RegoError objects with code, detail and location", () => {
    const [error] = parseModule("package a\np if {", "x.rego").errors;
    expect(error).toBeInstanceOf(RegoError);
    expect(error!.code).toBe("rego_parse_error");
    expect(error!.detail).toBe("unexpected eof token");
    expect(error!.location).toEqual({ file: "x.rego", line: 2, col: 7, offset: 16 });
  });
});

describe("Rego v0 syntax", () => {
  it("requires `if` before rule bodies", () => {
    expect(ruleErrors("p { true }")).toEqual([
      "policy.rego:2:1: rego_parse_error: `if` keyword is required before rule body",
    ]);
    expect(ruleErrors("f(x) { x }")).toEqual([
      "policy.rego:2:1: rego_parse_error: `if` keyword is required before function body",
    ]);
    expect(ruleErrors("p := 1 { true }")).toEqual([
      "policy.rego:2:1: rego_parse_error: `if` keyword is required before rule body",
    ]);
    expect(ruleErrors("p if { false } else = 1 { true }")).toEqual([
      "policy.rego:2:16: rego_parse_error: `if` keyword is required before rule body",
    ]);
  });

  it("requires `contains` for partial set rules", () => {
    expect(ruleErrors("p[x] { x := 1 }")).toEqual([
      "policy.rego:2:1: rego_parse_error: `if` keyword is required before rule body",
      "policy.rego:2:1: rego_parse_error: `contains` keyword is required for partial set rules",
    ]);
    expect(ruleErrors("p[x]")).toEqual([
      "policy.rego:2:1: rego_parse_error: `contains` keyword is required for partial set rules",
    ]);
  });

  it("rejects statements that cannot be rules", () => {
    expect(ruleErrors("p")).toEqual(["policy.rego:2:1: rego_parse_error: var cannot be used for rule name"]);
    expect(ruleErrors("a.b.c")).toEqual([
      "policy.rego:2:1: rego_parse_error: rule must have value assignment and/or body declaration",
    ]);
    expect(ruleErrors('"a" := 1')).toEqual([
      "policy.rego:2:1: rego_parse_error: string cannot be used for rule name",
    ]);
    expect(ruleErrors("1 + 2")).toEqual([
      "policy.rego:2:1: rego_parse_error: rule name conflicts with built-in function",
    ]);
    expect(ruleErrors("not p")).toEqual([
      "policy.rego:2:1: rego_parse_error: negated expressions cannot be used for rule head",
    ]);
    expect(ruleErrors("p := 1 with input as 2")).toEqual([
      "policy.rego:2:1: rego_parse_error: expressions using with keyword cannot be used for rule head",
    ]);
    expect(ruleErrors("f()")).toEqual([
      "policy.rego:2:1: rego_parse_error: rule argument list must take at least one argument",
    ]);
  });
});

describe("recovery", () => {
  it("reports an error per broken statement and keeps going", () => {
    const source = [
      "package test",
      "p if { x := }",
      "q := [1 2]",
      "r := 1",
      "s { true }",
      "t if { y := 1 +",
      "}",
    ].join("\n");
    expect(moduleErrors(source)).toEqual([
      "policy.rego:2:13: rego_parse_error: unexpected } token",
      'policy.rego:3:9: rego_parse_error: unexpected number token: expected "," or "]"',
      "policy.rego:3:9: rego_parse_error: unexpected number token: expected rule value term (e.g., q := <VALUE> { ... })",
      "policy.rego:5:1: rego_parse_error: `if` keyword is required before rule body",
      "policy.rego:7:1: rego_parse_error: unexpected } token",
    ]);
  });
});

describe("queries and terms", () => {
  it("reports query errors", () => {
    expect(queryErrors("x := ")).toEqual(["query.rego:1:6: rego_parse_error: unexpected eof token"]);
    expect(queryErrors("package x")).toEqual([
      "query.rego:1:1: rego_parse_error: unexpected package keyword",
    ]);
  });

  it("accepts exactly one plain term as a term", () => {
    expect(parseTerm("1 2", "t.rego").errors.map((e) => e.message)).toEqual([
      "t.rego:1:3: rego_parse_error: expected exactly one term",
    ]);
    expect(parseTerm("x := 1", "t.rego").errors.map((e) => e.message)).toEqual([
      "t.rego:1:1: rego_parse_error: expected term but got expression",
    ]);
    expect(parseTerm("", "t.rego").errors.map((e) => e.message)).toEqual([
      "t.rego:1:1: rego_parse_error: expected term",
    ]);
  });

  it("turns deep nesting into an error instead of a stack overflow", () => {
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    const { term, errors } = parseTerm(deep, "t.rego");
    expect(term).toBeUndefined();
    expect(errors[0]!.detail).toBe("max parsing recursion depth exceeded");
  });
});

describe("robustness", () => {
  const fragments = fc.constantFrom(
    "package",
    "import",
    "p",
    "x",
    "if",
    "contains",
    "else",
    "default",
    "some",
    "every",
    "in",
    "not",
    "with",
    "as",
    ":=",
    "=",
    "==",
    "+",
    "-",
    "|",
    ",",
    ";",
    ".",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "1",
    "-1.5e3",
    '"s"',
    "`r`",
    "\n",
    " ",
    "#c\n",
    "input.x",
    "_",
    "set()",
  );

  it("never throws on arbitrary strings", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (source) => {
        for (const result of [
          parseModule(source, "f.rego"),
          parseQuery(source, "f.rego"),
          parseTerm(source, "f.rego"),
        ]) {
          expect(Array.isArray(result.errors)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("never throws on token soup, and reports an error whenever there is no result", () => {
    fc.assert(
      fc.property(fc.array(fragments, { maxLength: 60 }), (parts) => {
        const source = parts.join(" ");
        const parsed = parseModule(`package t\n${source}`, "f.rego");
        expect(parsed.module !== undefined || parsed.errors.length > 0).toBe(true);
        const query = parseQuery(source, "f.rego");
        expect(query.body !== undefined || query.errors.length > 0).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});
