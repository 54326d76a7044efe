/**
 * Template strings (`$"…{expr}…"`, `` $`…` ``): scanning and parsing as OPA does, and evaluation
 * through the whole pipeline (lowered to `internal.template_string`).
 */
import { describe, expect, it } from "vitest";
import { callBuiltin } from "../../../src/rego/builtins/index.ts";
import { builtinTable, systemContext } from "../../../src/rego/builtins/registry.ts";
import { makeArray, makeSet, makeString, numberFromText, toJSON } from "../../../src/rego/plan/value.ts";
import { stripLocations } from "../../../src/rego/syntax/equality.ts";
import { parseModule } from "../../../src/rego/syntax/index.ts";
import { printModule } from "../../../src/rego/syntax/printer.ts";
import { parseMessages, planRule, wasmRule } from "./evaluate.ts";

function parts(source: string): unknown {
  const parsed = parseModule(`package p\nr := ${source}\n`, "p.rego");
  expect(parsed.errors.map((e) => e.message)).toEqual([]);
  const value = parsed.module!.rules[0]!.head.value!;
  return stripLocations(value);
}

/** The error messages of `r := <source>`, without their locations. */
function parseErrors(source: string): string[] {
  return parseMessages(`package p\nr := ${source}\n`).map((m) => m.replace(/^.*rego_parse_error: /, ""));
}

describe("parsing", () => {
  it("splits text and expressions, dropping empty text", () => {
    const term = parts('$"p{i + 1}.rego"') as { type: string; raw: boolean; parts: unknown[] };
    expect(term.type).toBe("templatestring");
    expect(term.raw).toBe(false);
    expect(term.parts).toHaveLength(3);
    expect(term.parts[0]).toEqual({ type: "string", value: "p" });
    expect(term.parts[2]).toEqual({ type: "string", value: ".rego" });
    const plain = parts('$"{x}"') as { parts: unknown[] };
    expect(plain.parts).toHaveLength(1);
  });

  it("keeps scalar literals as terms and unescapes text", () => {
    const term = parts('$"a\\tb \\{x} {1}{"s"}"') as { parts: unknown[] };
    expect(term.parts).toEqual([
      { type: "string", value: "a\tb {x} " },
      { type: "number", value: "1" },
      { type: "string", value: "s" },
    ]);
  });

  it("reads raw template strings over several lines, only \\{ escaped", () => {
    const term = parts("$`a\\n{x}\n\\{b}`") as { raw: boolean; parts: unknown[] };
    expect(term.raw).toBe(true);
    expect(term.parts[0]).toEqual({ type: "string", value: "a\\n" });
    expect(term.parts[2]).toEqual({ type: "string", value: "\n{b}" });
  });

  it("tells the brace closing an expression from braces inside it", () => {
    const term = parts('$"{ {"a": {1}}["a"] } end"') as { parts: unknown[] };
    expect(term.parts).toHaveLength(2);
    expect(term.parts[1]).toEqual({ type: "string", value: " end" });
  });

  it("nests template strings", () => {
    const term = parts('$"a{$"b{x}"}c"') as { parts: unknown[] };
    expect(term.parts).toHaveLength(3);
  });

  it("rejects what OPA rejects inside expressions", () => {
    expect(parseErrors('$"{x := 1}"')).toContain(
      "unexpected assignment (':=') in template-string expression",
    );
    expect(parseErrors('$"{x = 1}"')).toContain("unexpected unification ('=') in template-string expression");
    expect(parseErrors('$"{not x}"')).toContain("unexpected negation ('not') in template-string expression");
    expect(parseErrors('$"{x"')).not.toEqual([]);
    expect(parseErrors('$"abc')).toContain("non-terminated string");
    expect(parseErrors('$"\\}"')).toContain("illegal escape sequence");
  });

  it("prints back to the same tree", () => {
    const source = 'package p\n\nr := $"a\\\\{b} {x}{1} \\"q\\""\n\ns := $`raw {x} \\{ok}`\n';
    const first = parseModule(source, "p.rego").module!;
    const printed = printModule(first);
    const second = parseModule(printed, "p.rego");
    expect(second.errors).toEqual([]);
    expect(stripLocations(second.module!.rules)).toEqual(stripLocations(first.rules));
  });
});

describe("internal.template_string", () => {
  const ctx = systemContext(() => 0n);
  it("joins parts, rendering values as OPA prints them", () => {
    const value = callBuiltin(
      "internal.template_string",
      [
        makeArray([
          makeString("n="),
          makeSet([numberFromText("1")]),
          makeString(" s="),
          makeSet([makeString("x")]),
          makeString(" a="),
          makeSet([makeArray([makeString("y")])]),
          makeString(" u="),
          makeSet([]),
          numberFromText("2.50"),
        ]),
      ],
      ctx,
    );
    expect(value && toJSON(value)).toBe('n=1 s=x a=["y"] u=<undefined>2.50');
  });

  it("refuses more than one output", () => {
    const many = makeArray([makeSet([makeString("a"), makeString("b")])]);
    expect(callBuiltin("internal.template_string", [many], ctx)).toBeUndefined();
    expect(() => builtinTable.get("internal.template_string")!.impl([many], ctx)).toThrow(
      "template-strings must not produce multiple outputs",
    );
  });
});

describe("evaluation", () => {
  const source = `package p
r := [
  $"p{i + 1}.rego",
  $"user {input.user} has {count(input.roles)} roles: {input.roles}",
  $"missing: {input.nope}",
  $\`raw \\{x} {upper("a")}\`,
] if i := 1`;
  const expected = ["p2.rego", 'user ann has 2 roles: ["a", "b"]', "missing: <undefined>", "raw {x} A"];
  const input = { user: "ann", roles: ["a", "b"] };

  it("interpolates expressions, undefined ones as <undefined>", () => {
    expect(planRule(source, "data.p.r", input)).toEqual(expected);
  });

  it("renders literal parts in a compiled policy", async () => {
    expect(await wasmRule('package p\nr := $"a{1}{true}{null}b"', "p/r")).toBe("a1truenullb");
  });

  it("interpolates expressions in a compiled policy", async () => {
    expect(await wasmRule(source, "p/r", input)).toEqual(expected);
  });
});
