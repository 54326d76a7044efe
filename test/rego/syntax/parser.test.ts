import { describe, expect, it } from "vitest";
import type { Body, Expr, Module, Rule, Term } from "../../../src/rego/syntax/index.ts";
import {
  astEqual,
  parseModule,
  parseQuery,
  parseTerm,
  printModule,
  stripLocations,
} from "../../../src/rego/syntax/index.ts";

// Builders for expected trees (without locations).
const v = (name: string) => ({ type: "var", name });
const n = (value: string) => ({ type: "number", value });
const s = (value: string) => ({ type: "string", value });
const ref = (head: object, ...path: object[]) => ({ type: "ref", head, path });
const call = (op: string | object, ...args: object[]) => ({
  type: "call",
  op: typeof op === "string" ? v(op) : op,
  args,
});
const member2 = ref(v("internal"), s("member_2"));
const member3 = ref(v("internal"), s("member_3"));
const expr = (node: object, extra: object = {}) => ({ negated: false, node, with: [], ...extra });

function term(source: string): unknown {
  const { term, errors } = parseTerm(source, "t.rego");
  expect(errors.map((e) => e.message)).toEqual([]);
  return stripLocations(term);
}

function body(source: string): unknown {
  const { body, errors } = parseQuery(source, "q.rego");
  expect(errors.map((e) => e.message)).toEqual([]);
  return stripLocations(body);
}

/** The single expression of a query, as a term. */
function exprTerm(source: string): unknown {
  const parsed = body(source) as Array<{ node: unknown }>;
  expect(parsed).toHaveLength(1);
  return parsed[0]!.node;
}

function module(source: string): Module {
  const { module, errors } = parseModule(source, "m.rego");
  expect(errors.map((e) => e.message)).toEqual([]);
  return module!;
}

function rules(source: string): unknown {
  return stripLocations(module(`package test\n${source}`).rules);
}

function rule(source: string): unknown {
  const parsed = rules(source) as unknown[];
  expect(parsed).toHaveLength(1);
  return parsed[0];
}

describe("scalars", () => {
  it("parses null and booleans", () => {
    expect(term("null")).toEqual({ type: "null" });
    expect(term("true")).toEqual({ type: "boolean", value: true });
    expect(term("false")).toEqual({ type: "boolean", value: false });
  });

  it("keeps number text exactly, folding a leading minus", () => {
    for (const text of [
      "0",
      "1",
      "1.5",
      "0.25",
      "1e3",
      "2E-7",
      "0e5",
      "123456789012345678901234567890.000001",
    ]) {
      expect(term(text)).toEqual(n(text));
    }
    expect(term("-1")).toEqual(n("-1"));
    expect(term("- 2.5")).toEqual(n("-2.5"));
    expect(term(".5")).toEqual(n(".5"));
    expect(term("-.5")).toEqual(n("-.5"));
  });

  it("decodes every JSON string escape", () => {
    expect(term(String.raw`"a\"b\\c\/d\be\ff\ng\rh\ti"`)).toEqual(s('a"b\\c/d\be\ff\ng\rh\ti'));
    expect(term(String.raw`"\u00e9\u0041"`)).toEqual(s("éA"));
    expect(term(String.raw`"\ud83d\ude00"`)).toEqual(s("😀"));
    expect(term(String.raw`"\ud800x"`)).toEqual(s("\ufffdx"));
    expect(term('"no escapes é 😀"')).toEqual(s("no escapes é 😀"));
  });

  it("reads raw strings verbatim, across lines", () => {
    expect(term('`a\\nb\n"c"`')).toEqual(s('a\\nb\n"c"'));
  });
});

describe("composites", () => {
  it("parses arrays, objects and sets", () => {
    expect(term("[]")).toEqual({ type: "array", items: [] });
    expect(term("[1, x, ]")).toEqual({ type: "array", items: [n("1"), v("x")] });
    expect(term("{}")).toEqual({ type: "object", entries: [] });
    expect(term('{"a": 1, x: [2]}')).toEqual({
      type: "object",
      entries: [
        [s("a"), n("1")],
        [v("x"), { type: "array", items: [n("2")] }],
      ],
    });
    expect(term("{1}")).toEqual({ type: "set", items: [n("1")] });
    expect(term("set()")).toEqual({ type: "set", items: [] });
    expect(term('{"a": {1, 2}}')).toEqual({
      type: "object",
      entries: [[s("a"), { type: "set", items: [n("1"), n("2")] }]],
    });
  });

  it("parses comprehensions", () => {
    const xs = expr(call("assign", v("x"), ref(v("xs"), v("_"))));
    expect(term("[x | x := xs[_]]")).toEqual({ type: "arraycompr", term: v("x"), body: [xs] });
    expect(term("{x | x := xs[_]}")).toEqual({ type: "setcompr", term: v("x"), body: [xs] });
    expect(term("{k: x | x := xs[_]; k := 1}")).toEqual({
      type: "objectcompr",
      key: v("k"),
      value: v("x"),
      body: [xs, expr(call("assign", v("k"), n("1")))],
    });
  });

  it("prefers a comprehension to `|`, and falls back to a list when the body fails", () => {
    expect(term("[a | b]")).toEqual({ type: "arraycompr", term: v("a"), body: [expr(v("b"))] });
    expect(term("[a | b, c]")).toEqual({ type: "array", items: [call("or", v("a"), v("b")), v("c")] });
    expect(term("[(a | b)]")).toEqual({ type: "array", items: [call("or", v("a"), v("b"))] });
    expect(term("[x + 1, 2]")).toEqual({ type: "array", items: [call("plus", v("x"), n("1")), n("2")] });
    expect(term("{a + 1: b | true}")).toEqual({
      type: "objectcompr",
      key: call("plus", v("a"), n("1")),
      value: v("b"),
      body: [expr({ type: "boolean", value: true })],
    });
  });
});

describe("refs and calls", () => {
  it("parses dotted and bracketed operands", () => {
    expect(term('a.b[c]["d"][_]')).toEqual(ref(v("a"), s("b"), v("c"), s("d"), v("_")));
    expect(term("input.x.y")).toEqual(ref(v("input"), s("x"), s("y")));
    expect(term("[1, 2][i]")).toEqual(ref({ type: "array", items: [n("1"), n("2")] }, v("i")));
    expect(term("f(x)[0]")).toEqual(ref(call("f", v("x")), n("0")));
  });

  it("keeps `data` and `input` alone as variables", () => {
    expect(term("data")).toEqual(v("data"));
    expect(term("input")).toEqual(v("input"));
  });

  it("allows keywords after a dot", () => {
    expect(term("input.if.contains.else.null")).toEqual(
      ref(v("input"), s("if"), s("contains"), s("else"), s("null")),
    );
  });

  it("parses builtin and user calls", () => {
    expect(exprTerm("count(xs)")).toEqual(call("count", v("xs")));
    expect(exprTerm('object.get(o, "k", 1)')).toEqual(
      call(ref(v("object"), s("get")), v("o"), s("k"), n("1")),
    );
    expect(exprTerm("data.lib.f(x).y")).toEqual(ref(call(ref(v("data"), s("lib"), s("f")), v("x")), s("y")));
    expect(exprTerm("contains(x, y)")).toEqual(call("contains", v("x"), v("y")));
    expect(exprTerm("f()")).toEqual(call("f"));
  });

  it("needs `.`, `[` and `(` directly after the term", () => {
    expect(body("x\n[1]")).toEqual([expr(v("x")), expr({ type: "array", items: [n("1")] })]);
  });
});

describe("operators", () => {
  it("follows OPA's precedence: in < relation < | < & < + - < * / %", () => {
    expect(exprTerm("a + b * c")).toEqual(call("plus", v("a"), call("mul", v("b"), v("c"))));
    expect(exprTerm("a - b - c")).toEqual(call("minus", call("minus", v("a"), v("b")), v("c")));
    expect(exprTerm("a | b & c")).toEqual(call("or", v("a"), call("and", v("b"), v("c"))));
    expect(exprTerm("a == b | c")).toEqual(call("equal", v("a"), call("or", v("b"), v("c"))));
    expect(exprTerm("a < b + 1")).toEqual(call("lt", v("a"), call("plus", v("b"), n("1"))));
    expect(exprTerm("a == b in c")).toEqual(call(member2, call("equal", v("a"), v("b")), v("c")));
    expect(exprTerm("x in xs == true")).toEqual(
      call(member2, v("x"), call("equal", v("xs"), { type: "boolean", value: true })),
    );
    expect(exprTerm("(a + b) * c")).toEqual(call("mul", call("plus", v("a"), v("b")), v("c")));
  });

  it("maps every operator to OPA's builtin name", () => {
    const names: Record<string, string> = {
      "==": "equal",
      "!=": "neq",
      "<": "lt",
      "<=": "lte",
      ">": "gt",
      ">=": "gte",
      "+": "plus",
      "-": "minus",
      "*": "mul",
      "/": "div",
      "%": "rem",
      "|": "or",
      "&": "and",
    };
    for (const [symbol, name] of Object.entries(names)) {
      expect(exprTerm(`a ${symbol} b`)).toEqual(call(name, v("a"), v("b")));
    }
    expect(exprTerm("a := b")).toEqual(call("assign", v("a"), v("b")));
    expect(exprTerm("a = b")).toEqual(call("eq", v("a"), v("b")));
  });

  it("subtracts a negative literal", () => {
    expect(exprTerm("x - -1")).toEqual(call("minus", v("x"), n("-1")));
    expect(exprTerm("x-1")).toEqual(call("minus", v("x"), n("1")));
  });

  it("parses `x in xs` and `k, v in xs` where OPA allows each", () => {
    expect(exprTerm("x in xs")).toEqual(call(member2, v("x"), v("xs")));
    expect(exprTerm("k, x in xs")).toEqual(call(member3, v("k"), v("x"), v("xs")));
    expect(exprTerm("y := (k, x in xs)")).toEqual(
      call("assign", v("y"), call(member3, v("k"), v("x"), v("xs"))),
    );
    // In argument lists the comma separates arguments.
    expect(exprTerm("f(k, x in xs)")).toEqual(call("f", v("k"), call(member2, v("x"), v("xs"))));
    expect(exprTerm("x in y in z")).toEqual(call(member2, call(member2, v("x"), v("y")), v("z")));
  });

  it("continues an expression after an operator or across lines, like OPA", () => {
    expect(body("x := 1 +\n  2")).toEqual([expr(call("assign", v("x"), call("plus", n("1"), n("2"))))]);
    expect(body("x := y\n-1 == z")).toEqual([
      expr(call("assign", v("x"), call("equal", call("minus", v("y"), n("1")), v("z")))),
    ]);
  });
});

describe("expressions", () => {
  it("splits bodies on newlines and semicolons", () => {
    expect(body("x := 1; y = x\nz")).toEqual([
      expr(call("assign", v("x"), n("1"))),
      expr(call("eq", v("y"), v("x"))),
      expr(v("z")),
    ]);
  });

  it("parses negation and with modifiers", () => {
    expect(body("not f(x) with input.a as 1 with data.b as {}")).toEqual([
      {
        negated: true,
        node: call("f", v("x")),
        with: [
          { target: ref(v("input"), s("a")), value: n("1") },
          { target: ref(v("data"), s("b")), value: { type: "object", entries: [] } },
        ],
      },
    ]);
    expect(body("x with f as g")).toEqual([expr(v("x"), { with: [{ target: v("f"), value: v("g") }] })]);
  });

  it("parses some declarations", () => {
    expect(body("some x, y")).toEqual([expr({ type: "some", symbols: [v("x"), v("y")] })]);
    expect(body("some x in xs")).toEqual([expr({ type: "some", symbols: [call(member2, v("x"), v("xs"))] })]);
    expect(body("some k, x in xs")).toEqual([
      expr({ type: "some", symbols: [call(member3, v("k"), v("x"), v("xs"))] }),
    ]);
  });

  it("parses every", () => {
    const everyBody = [expr(call("gt", v("x"), n("0")))];
    expect(body("every x in xs { x > 0 }")).toEqual([
      expr({ type: "every", value: v("x"), domain: v("xs"), body: everyBody }),
    ]);
    expect(body("every k, x in xs { x > 0 }")).toEqual([
      expr({ type: "every", key: v("k"), value: v("x"), domain: v("xs"), body: everyBody }),
    ]);
  });

  it("reads a keyword that starts a ref as a name", () => {
    expect(body("not.x")).toEqual([expr(ref(v("not"), s("x")))]);
    expect(body("not x.y")).toEqual([{ negated: true, node: ref(v("x"), s("y")), with: [] }]);
  });
});

describe("packages and imports", () => {
  it("parses package paths", () => {
    expect(module("package a.b").package.path).toEqual(["a", "b"]);
    expect(module('package a["b-c"].d').package.path).toEqual(["a", "b-c", "d"]);
    expect(module("package data.x").package.path).toEqual(["data", "x"]);
  });

  it("parses imports, aliases and the no-op keyword imports", () => {
    const m = module(
      "package p\nimport data.lib.util\nimport input.user as u\nimport rego.v1\nimport future.keywords\nimport future.keywords.in\nimport data",
    );
    expect(stripLocations(m.imports)).toEqual([
      { path: ref(v("data"), s("lib"), s("util")) },
      { path: ref(v("input"), s("user")), alias: "u" },
      { path: ref(v("rego"), s("v1")) },
      { path: ref(v("future"), s("keywords")) },
      { path: ref(v("future"), s("keywords"), s("in")) },
      { path: v("data") },
    ]);
  });
});

describe("rules", () => {
  const head = (fields: object) => ({ assign: false, ...fields });
  const rule1 = (headFields: object, ruleBody: Body | object[] = [], extra: object = {}) => ({
    default: false,
    head: head(headFields),
    body: ruleBody,
    ...extra,
  });
  const trueBody = [expr({ type: "boolean", value: true })];

  it("parses complete rules with and without bodies", () => {
    expect(rule("p if { true }")).toEqual(rule1({ ref: v("p") }, trueBody));
    expect(rule("p := 1 if { true }")).toEqual(rule1({ ref: v("p"), value: n("1"), assign: true }, trueBody));
    expect(rule("p = 1 if { true }")).toEqual(rule1({ ref: v("p"), value: n("1") }, trueBody));
    expect(rule("p := 1")).toEqual(rule1({ ref: v("p"), value: n("1"), assign: true }));
    expect(rule("p = [1]")).toEqual(rule1({ ref: v("p"), value: { type: "array", items: [n("1")] } }));
  });

  it("takes a single expression after `if`", () => {
    expect(rule("p if x > 1")).toEqual(rule1({ ref: v("p") }, [expr(call("gt", v("x"), n("1")))]));
    expect(rule("p if {}")).toEqual(rule1({ ref: v("p") }, [expr({ type: "object", entries: [] })]));
  });

  it("parses multi-value rules", () => {
    expect(rule("p contains x if { x := 1 }")).toEqual(
      rule1({ ref: v("p"), key: v("x") }, [expr(call("assign", v("x"), n("1")))]),
    );
    expect(rule('p contains "a"')).toEqual(rule1({ ref: v("p"), key: s("a") }));
    expect(rule("a.b contains 1")).toEqual(rule1({ ref: ref(v("a"), s("b")), key: n("1") }));
  });

  it("parses partial objects and general ref heads", () => {
    expect(rule("p[k] := 1 if k := 2")).toEqual(
      rule1({ ref: ref(v("p"), v("k")), value: n("1"), assign: true }, [
        expr(call("assign", v("k"), n("2"))),
      ]),
    );
    expect(rule("a.b[c].d := 1 if true")).toEqual(
      rule1({ ref: ref(v("a"), s("b"), v("c"), s("d")), value: n("1"), assign: true }, trueBody),
    );
    expect(rule("a.b.c if true")).toEqual(rule1({ ref: ref(v("a"), s("b"), s("c")) }, trueBody));
    expect(rule("p[x] if true")).toEqual(rule1({ ref: ref(v("p"), v("x")) }, trueBody));
    expect(rule("a.b[c] := 1")).toEqual(
      rule1({ ref: ref(v("a"), s("b"), v("c")), value: n("1"), assign: true }),
    );
    expect(rule("if.x := 1")).toEqual(rule1({ ref: ref(v("if"), s("x")), value: n("1"), assign: true }));
  });

  it("parses functions", () => {
    expect(rule("f(x, y) := z if { z := x + y }")).toEqual(
      rule1({ ref: v("f"), args: [v("x"), v("y")], value: v("z"), assign: true }, [
        expr(call("assign", v("z"), call("plus", v("x"), v("y")))),
      ]),
    );
    expect(rule("f(x) if x")).toEqual(rule1({ ref: v("f"), args: [v("x")] }, [expr(v("x"))]));
    expect(rule("f(1) := 2")).toEqual(rule1({ ref: v("f"), args: [n("1")], value: n("2"), assign: true }));
    expect(rule("f(1)")).toEqual(rule1({ ref: v("f"), args: [n("1")] }));
    expect(rule("a.b.f(x) = 1")).toEqual(
      rule1({ ref: ref(v("a"), s("b"), s("f")), args: [v("x")], value: n("1") }),
    );
  });

  it("parses default rules", () => {
    expect(rule("default p := false")).toEqual({
      default: true,
      head: head({ ref: v("p"), value: { type: "boolean", value: false }, assign: true }),
      body: [],
    });
    expect(rule("default f(_, x) = {1}")).toEqual({
      default: true,
      head: head({ ref: v("f"), args: [v("_"), v("x")], value: { type: "set", items: [n("1")] } }),
      body: [],
    });
  });

  it("parses else chains, copying the head's ref and arguments", () => {
    const parsed = rule("f(x) := 1 if { x } else := 2 if { true } else = 3") as Rule;
    expect(parsed.else).toEqual({
      default: false,
      head: head({ ref: v("f"), args: [v("x")], value: n("2"), assign: true }),
      body: trueBody,
      else: { default: false, head: head({ ref: v("f"), args: [v("x")], value: n("3") }), body: [] },
    });
    const implicit = rule("p if { false } else if { true }") as Rule;
    expect(implicit.else).toEqual(rule1({ ref: v("p") }, trueBody));
  });

  it("defines one rule per extra body (`p if { a } { b }`)", () => {
    expect(rules("p if { a } { b }")).toEqual([
      rule1({ ref: v("p") }, [expr(v("a"))]),
      rule1({ ref: v("p") }, [expr(v("b"))]),
    ]);
  });

  it("starts a new statement on the same line", () => {
    expect(rules("p := 1 q := 2")).toEqual([
      rule1({ ref: v("p"), value: n("1"), assign: true }),
      rule1({ ref: v("q"), value: n("2"), assign: true }),
    ]);
  });
});

describe("locations", () => {
  it("records 1-based line and column and 0-based offset of each node's first token", () => {
    const m = module("package a\n\np := x + 1 if {\n\tnot input.y\n}");
    expect(m.package.loc).toEqual({ file: "m.rego", line: 1, col: 1, offset: 0 });
    const r = m.rules[0]!;
    expect(r.loc).toMatchObject({ line: 3, col: 1, offset: 11 });
    const value = r.head.value as Term & { type: "call" };
    expect(value.loc).toMatchObject({ line: 3, col: 6 });
    expect(value.op.loc).toMatchObject({ line: 3, col: 8 });
    expect(value.args[1]!.loc).toMatchObject({ line: 3, col: 10 });
    const first = r.body[0] as Expr;
    expect(first.loc).toMatchObject({ line: 4, col: 2, offset: 28 });
    expect((first.node as Term).loc).toMatchObject({ line: 4, col: 6 });
  });

  it("counts columns in code points", () => {
    const m = module('package a\np := "😀" + x');
    const value = m.rules[0]!.head.value as Term & { type: "call" };
    expect(value.args[1]!.loc).toMatchObject({ line: 2, col: 12, offset: 22 });
  });

  it("keeps comments with their positions", () => {
    const m = module("# head\npackage a # trailing\r\n");
    expect(m.comments).toEqual([
      { text: " head", loc: { file: "m.rego", line: 1, col: 1, offset: 0 } },
      { text: " trailing", loc: { file: "m.rego", line: 2, col: 11, offset: 17 } },
    ]);
  });
});

describe("rego.v2 negated bodies", () => {
  it("parses `not { … }` in modules that import rego.v2, and prints it back", () => {
    const source = "package t\nimport rego.v2\np if {\n  not { input.a; input.b }\n}\n";
    const { module, errors } = parseModule(source, "v2.rego");
    expect(errors).toEqual([]);
    const expr = module!.rules[0]!.body[0]!;
    expect(expr.negated).toBe(true);
    expect(expr.node.type).toBe("body");
    const again = parseModule(printModule(module!), "v2.rego");
    expect(again.errors).toEqual([]);
    expect(astEqual(again.module!, module!)).toBe(true);
  });

  it("reads `not { … }` as a negated set literal without the import", () => {
    const { module } = parseModule("package t\np if { not { input.a } }", "v1.rego");
    expect(module!.rules[0]!.body[0]!.node.type).toBe("set");
  });
});
