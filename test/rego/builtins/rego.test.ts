/**
 * Builtins of the `rego` area: `rego.parse_module` (OPA's JSON encoding of a module),
 * `rego.metadata.*` outside rules, and `internal.template_string`.
 */
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { callBuiltin } from "../../../src/rego/builtins/index.ts";
import { builtinTable, systemContext } from "../../../src/rego/builtins/registry.ts";
import { makeString, toJSON, type Value } from "../../../src/rego/plan/value.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";

const ctx = systemContext(() => 1_700_000_000_000_000_000n);

function parse(source: string): unknown {
  const value = callBuiltin("rego.parse_module", [makeString("x.rego"), makeString(source)], ctx);
  return value && toJSON(value);
}

function impl(name: string, args: Value[]): Value | undefined {
  return builtinTable.get(name)!.impl(args, ctx);
}

const v = (name: string) => ({ type: "var", value: name });
const s = (value: string) => ({ type: "string", value });
const n = (value: number) => ({ type: "number", value });
const ref = (...parts: unknown[]) => ({ type: "ref", value: parts });
const t = { type: "boolean", value: true };

describe("rego.parse_module", () => {
  it("encodes package, imports and rules as OPA does", () => {
    const module = parse(`package a.b
import data.lib.util as u
import input.user

default allow := false

allow if {
  x := input.n + 1
  not u.deny[x]
}

f(y) := y * 2
names contains name if some name in input.names
p.q[r] := 1 if r := "k"
`);
    expect(module).toEqual({
      package: { path: [v("data"), s("a"), s("b")] },
      imports: [
        { path: ref(v("data"), s("lib"), s("util")), alias: "u" },
        { path: ref(v("input"), s("user")) },
      ],
      rules: [
        {
          default: true,
          head: { name: "allow", ref: [v("allow")], value: { type: "boolean", value: false }, assign: true },
          body: [{ index: 0, terms: t }],
        },
        {
          head: { name: "allow", ref: [v("allow")], value: t },
          body: [
            {
              index: 0,
              terms: [
                ref(v("assign")),
                v("x"),
                { type: "call", value: [ref(v("plus")), ref(v("input"), s("n")), n(1)] },
              ],
            },
            { index: 1, negated: true, terms: ref(v("u"), s("deny"), v("x")) },
          ],
        },
        {
          head: {
            name: "f",
            ref: [v("f")],
            args: [v("y")],
            value: { type: "call", value: [ref(v("mul")), v("y"), n(2)] },
            assign: true,
          },
          body: [{ index: 0, terms: t }],
        },
        {
          head: { name: "names", ref: [v("names")], key: v("name") },
          body: [
            {
              index: 0,
              terms: {
                symbols: [
                  {
                    type: "call",
                    value: [ref(v("internal"), s("member_2")), v("name"), ref(v("input"), s("names"))],
                  },
                ],
              },
            },
          ],
        },
        {
          head: { ref: [v("p"), s("q"), v("r")], value: n(1), assign: true },
          body: [{ index: 0, terms: [ref(v("assign")), v("r"), s("k")] }],
        },
      ],
    });
  });

  it("encodes composite terms, wildcards, with and comments", () => {
    const module = parse(`package p
# a comment
r if {
  [_, _] = [{"b": 2, "a": 1}, {3, 1}]
  count([x | x := 1]) with input as {}
}
`) as { rules: Array<{ body: unknown[] }>; comments: unknown[] };
    expect(module.rules[0]!.body).toEqual([
      {
        index: 0,
        terms: [
          ref(v("eq")),
          { type: "array", value: [v("$0"), v("$1")] },
          {
            type: "array",
            value: [
              {
                type: "object",
                value: [
                  [s("a"), n(1)],
                  [s("b"), n(2)],
                ],
              },
              { type: "set", value: [n(1), n(3)] },
            ],
          },
        ],
      },
      {
        index: 1,
        terms: [
          ref(v("count")),
          {
            type: "arraycomprehension",
            value: { term: v("x"), body: [{ index: 0, terms: [ref(v("assign")), v("x"), n(1)] }] },
          },
        ],
        with: [{ target: ref(v("input")), value: { type: "object", value: [] } }],
      },
    ]);
    expect(module.comments).toEqual([
      { Text: Buffer.from(" a comment").toString("base64"), Location: { file: "x.rego", row: 2, col: 1 } },
    ]);
  });

  it("leaves METADATA blocks as comments, as OPA's ast.ParseModule does", () => {
    const module = parse("# METADATA\n# title: [broken\npackage p\n\n# METADATA\n# title: R\nr := 1\n") as {
      annotations?: unknown;
      rules: Array<{ annotations?: unknown }>;
      comments: unknown[];
    };
    expect(module.annotations).toBeUndefined();
    expect(module.rules[0]!.annotations).toBeUndefined();
    expect(module.comments).toHaveLength(4);
  });

  it("fails with OPA's error text on parse errors", () => {
    expect(() => impl("rego.parse_module", [makeString("x.rego"), makeString("package p\nr if {")])).toThrow(
      /rego\.parse_module: x\.rego:2: rego_parse_error: /,
    );
    // OPA stops at the first broken statement; Writ's parser goes on, so the count differs.
    expect(() =>
      impl("rego.parse_module", [makeString("x.rego"), makeString("package p\na b\nc d")]),
    ).toThrow(/\d+ errors occurred:\nx\.rego:2: rego_parse_error: .*\n/);
    expect(parse("package p\nr if {")).toBeUndefined();
  });

  it("runs in a compiled policy", async () => {
    const built = buildPolicy(
      [
        {
          file: "p.rego",
          source: `package p
r := m.rules[0].head.name if m := rego.parse_module("x.rego", "package x\\nallow := true")
`,
        },
      ],
      { entrypoints: ["p/r"], optimize: false },
    );
    expect(built.errors).toEqual([]);
    const policy = await loadCompiledPolicy({ wasm: built.wasm!, hostBuiltins: built.hostBuiltins });
    expect(policy.evaluate({}, "p/r")).toEqual([{ result: "allow" }]);
  });
});

describe("rego.metadata outside rules", () => {
  it("fails as OPA does", () => {
    expect(() => impl("rego.metadata.rule", [])).toThrow(
      "the rego.metadata.rule function must only be called within the scope of a rule",
    );
    expect(() => impl("rego.metadata.chain", [])).toThrow(
      "the rego.metadata.chain function must only be called within the scope of a rule",
    );
  });
});
