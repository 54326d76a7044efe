import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { builtinTable, callBuiltin, systemContext } from "../../../src/rego/builtins/index.ts";
import {
  fromJSON,
  makeObject,
  makeSet,
  makeString,
  numberFromText,
  toJSON,
} from "../../../src/rego/plan/value.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";

const ctx = systemContext(() => 1_700_000_000_000_000_000n);

function render(template: string, vars: Record<string, unknown>): unknown {
  const result = callBuiltin("strings.render_template", [fromJSON(template), fromJSON(vars)], ctx);
  return result === undefined ? undefined : toJSON(result);
}

function renderError(template: string, vars: Record<string, unknown>): string | undefined {
  const def = builtinTable.get("strings.render_template");
  if (!def) throw new Error("no builtin");
  try {
    def.impl([fromJSON(template), fromJSON(vars)], ctx);
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

describe("strings.render_template", () => {
  it("substitutes fields, nested fields and index", () => {
    expect(render("Hello {{.name}}!", { name: "world" })).toBe("Hello world!");
    expect(
      render('{{.a.b}}-{{index .xs 1}}-{{index .m "k"}}', { a: { b: 1.5 }, xs: ["p", "q"], m: { k: true } }),
    ).toBe("1.5-q-true");
    const big = makeObject([[makeString("n"), numberFromText("12345678901234567890.50")]]);
    const rendered = callBuiltin("strings.render_template", [makeString("{{.n}}"), big], ctx);
    expect(rendered === undefined ? undefined : toJSON(rendered)).toBe("12345678901234567890.50");
    expect(render("{{.xs}} {{.m}} {{.z}}", { xs: [1, "a", null], m: { b: 2, a: [1] }, z: null })).toBe(
      "[1 a <nil>] map[a:[1] b:2] <no value>",
    );
  });

  it("runs if/else if/else, with and range", () => {
    const t = "{{if .a}}A{{else if .b}}B{{else}}C{{end}}";
    expect(render(t, { a: true, b: true })).toBe("A");
    expect(render(t, { a: false, b: "x" })).toBe("B");
    expect(render(t, { a: false, b: "" })).toBe("C");
    expect(render("{{with .u}}{{.name}}{{else}}none{{end}}", { u: { name: "ann" } })).toBe("ann");
    expect(render("{{with .u}}{{.name}}{{else}}none{{end}}", { u: {} })).toBe("none");
    expect(render("{{range $i, $v := .xs}}{{$i}}={{$v}};{{end}}", { xs: ["a", "b"] })).toBe("0=a;1=b;");
    expect(render("{{range $k, $v := .m}}{{$k}}:{{$v}} {{end}}", { m: { z: 1, a: 2 } })).toBe("a:2 z:1 ");
    expect(render("{{range .xs}}{{.}}{{else}}empty{{end}}", { xs: [] })).toBe("empty");
    expect(render('{{range .xs}}{{if eq . "b"}}{{break}}{{end}}{{.}}{{end}}', { xs: ["a", "b", "c"] })).toBe(
      "a",
    );
    expect(
      render('{{range .xs}}{{if eq . "b"}}{{continue}}{{end}}{{.}}{{end}}', { xs: ["a", "b", "c"] }),
    ).toBe("ac");
  });

  it("evaluates pipelines, variables and the builtin functions", () => {
    expect(render('{{.s | printf "%q"}}', { s: "hi" })).toBe('"hi"');
    expect(render('{{printf "%s-%d-%5.2f" "a" 7 3.14159}}', {})).toBe("a-7- 3.14");
    expect(render('{{$x := .s}}{{$x}}{{$x = "b"}}{{$x}}', { s: "a" })).toBe("ab");
    expect(render("{{len .xs}} {{len .s}} {{len .m}}", { xs: [1, 2], s: "héllo", m: { a: 1 } })).toBe(
      "2 6 1",
    );
    expect(render("{{and .a .b}} {{or .a .b}} {{not .a}}", { a: "x", b: "" })).toBe(" x false");
    expect(render('{{print 1 2 "a" "b"}}|{{println "x" 3}}', {})).toBe("1 2ab|x 3\n");
    expect(render('{{if and (eq .s "a") (ne .t "a")}}yes{{end}}', { s: "a", t: "b" })).toBe("yes");
    expect(render('{{lt 1 2}} {{ge 2.5 2.5}} {{gt "b" "a"}}', {})).toBe("true true true");
    expect(render("{{html .s}} {{urlquery .s}} {{js .s}}", { s: "<a&b 'c'>" })).toBe(
      "&lt;a&amp;b &#39;c&#39;&gt; %3Ca%26b+%27c%27%3E \\u003Ca\\u0026b \\'c\\'\\u003E",
    );
    expect(render("{{slice .s 1 3}} {{slice .xs 1}}", { s: "abcd", xs: [1, 2, 3] })).toBe("bc [2 3]");
  });

  it("defines and calls named templates, and blocks", () => {
    expect(render('{{define "T"}}<{{.}}>{{end}}{{template "T" .x}}{{template "T"}}', { x: "a" })).toBe(
      "<a><<no value>>",
    );
    expect(render('{{block "B" .x}}[{{.}}]{{end}}', { x: 1 })).toBe("[1]");
    expect(renderError('{{template "nope"}}', {})).toContain('template "nope" not defined');
    expect(renderError('{{define "R"}}{{template "R"}}{{end}}{{template "R"}}', {})).toContain(
      "exceeded maximum template depth",
    );
  });

  it("trims whitespace around - markers and skips comments", () => {
    expect(render("a  {{- .x -}}  b {{/* note */}}c", { x: 1 })).toBe("a1b c");
  });

  it("trims long whitespace runs (backtracking would not end within the test's timeout)", () => {
    const spaces = " ".repeat(100_000);
    expect(render(`${spaces}x${spaces}{{- .a}}`, { a: 1 })).toBe(`${spaces}x1`);
  });

  it("treats sets as slices", () => {
    const vars = makeObject([[makeString("s"), makeSet([makeString("b"), makeString("a")])]]);
    const result = callBuiltin(
      "strings.render_template",
      [makeString("{{range .s}}{{.}},{{end}}"), vars],
      ctx,
    );
    expect(result === undefined ? undefined : toJSON(result)).toBe("a,b,");
  });

  it("reports a missing key, like OPA's missingkey=error", () => {
    expect(renderError("Hello {{.name}}", {})).toBe(
      'strings.render_template: template: template:1:8: executing "template" at <.name>: map has no entry for key "name"',
    );
  });

  it("reports parse errors and bad calls", () => {
    expect(renderError("{{if .a}}x", { a: 1 })).toBe(
      "strings.render_template: template: template:1: unexpected EOF",
    );
    expect(renderError("{{nope .a}}", { a: 1 })).toBe(
      'strings.render_template: template: template:1: function "nope" not defined',
    );
    expect(renderError("{{end}}", {})).toBe(
      "strings.render_template: template: template:1: unexpected {{end}}",
    );
    expect(renderError("{{index .xs 5}}", { xs: [1] })).toContain(
      "error calling index: index out of range: 5",
    );
    expect(renderError("{{eq .n 1}}", { n: 1 })).toContain("incompatible types for comparison");
    expect(renderError("x", 1 as unknown as Record<string, unknown>)).toBe(
      "strings.render_template: operand 2 must be object but got number",
    );
  });
});

describe("in a compiled policy", () => {
  it("renders through the SDK", async () => {
    const built = buildPolicy(
      [
        {
          file: "p.rego",
          source: `package p
r := strings.render_template("{{.user}} may {{range $i, $a := .actions}}{{if $i}}, {{end}}{{$a}}{{end}}", input)`,
        },
      ],
      { entrypoints: ["p/r"] },
    );
    expect(built.errors).toEqual([]);
    if (!built.wasm) throw new Error("no module");
    const policy = await loadCompiledPolicy({ wasm: built.wasm });
    expect(policy.evaluate({ user: "ann", actions: ["read", "write"] }, "p/r")).toEqual([
      { result: "ann may read, write" },
    ]);
  });
});
