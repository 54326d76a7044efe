/**
 * Rego v0 (`regoVersion: 0`, OPA's `--v0-compatible`): what v0 accepts and v1 refuses, the
 * future keywords as names until imported, and `import rego.v1` making a module follow v1's
 * rules. A v0 module parses to the AST of its v1 spelling.
 */
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";
import { stripLocations } from "../../../src/rego/syntax/equality.ts";
import { type Module, parseModule, parseQuery } from "../../../src/rego/syntax/index.ts";

function v0(source: string): Module {
  const parsed = parseModule(source, "v0.rego", { regoVersion: 0 });
  expect(parsed.errors.map((e) => e.message)).toEqual([]);
  return parsed.module!;
}

function v1(source: string): Module {
  const parsed = parseModule(source, "v1.rego");
  expect(parsed.errors.map((e) => e.message)).toEqual([]);
  return parsed.module!;
}

/** The parse errors of `source` in that Rego version, named `v0.rego` or `v1.rego`. */
function messages(source: string, regoVersion: 0 | 1 = 0): string[] {
  return parseModule(source, `v${regoVersion}.rego`, { regoVersion }).errors.map((e) => e.message);
}

function sameRules(v0Source: string, v1Source: string): void {
  expect(stripLocations(v0(v0Source).rules)).toEqual(stripLocations(v1(v1Source).rules));
}

describe("Rego v0 rules", () => {
  it("reads bodies without `if` as their v1 spelling", () => {
    sameRules("package p\nr { input.x }", "package p\nr if { input.x }");
    sameRules("package p\nr = 1 { input.x }", "package p\nr = 1 if { input.x }");
    sameRules("package p\nf(x) { x > 1 }", "package p\nf(x) if { x > 1 }");
    sameRules("package p\nf(x) = y { y := x }", "package p\nf(x) = y if { y := x }");
    sameRules("package p\na.b.c { true }", "package p\na.b.c if { true }");
    sameRules(
      "package p\nr = 1 { false } else = 2 { true }",
      "package p\nr = 1 if { false } else = 2 if { true }",
    );
  });

  it("reads `p[x] { … }` and `p.q { … }` as partial set rules", () => {
    sameRules('package p\nv[{"msg": m}] { m := "x" }', 'package p\nv contains {"msg": m} if { m := "x" }');
    sameRules("package p\ns.q { true }", 'package p\ns contains "q" if { true }');
    sameRules(
      "package p\ns[x] { x := 1 } { x := 2 }",
      "package p\ns contains x if { x := 1 }\ns contains x if { x := 2 }",
    );
  });

  it("reads `p[k] = v { … }` as a partial object rule", () => {
    sameRules('package p\no[k] = v { k := "a"; v := 1 }', 'package p\no[k] = v if { k := "a"; v := 1 }');
  });

  it("reads bare `p[x]` as a set member and `a.b.c` as a rule of value true", () => {
    sameRules('package p\ns["a"]\ns["b"]', 'package p\ns contains "a"\ns contains "b"');
    sameRules("package p\na.b.c", "package p\na.b.c = true");
  });

  it("rejects in v1 what only v0 accepts", () => {
    expect(messages("package p\ns[x] { x := 1 }", 1)).toEqual([
      "v1.rego:2:1: rego_parse_error: `if` keyword is required before rule body",
      "v1.rego:2:1: rego_parse_error: `contains` keyword is required for partial set rules",
    ]);
    expect(messages('package p\ns["a"]', 1)).toEqual([
      "v1.rego:2:1: rego_parse_error: `contains` keyword is required for partial set rules",
    ]);
    expect(messages("package p\na.b.c", 1)).toEqual([
      "v1.rego:2:1: rego_parse_error: rule must have value assignment and/or body declaration",
    ]);
  });

  it("keeps what neither version accepts an error", () => {
    expect(messages("package p\np")).toEqual([
      "v0.rego:2:1: rego_parse_error: var cannot be used for rule name",
    ]);
    expect(messages("package p\ninput")).toEqual([
      "v0.rego:2:1: rego_parse_error: refs cannot be used for rule head",
    ]);
    expect(messages("package p\ns[x] = 1 { x := 1 } else = 2 { true }")).toEqual([
      "v0.rego:2:21: rego_parse_error: else keyword cannot be used on rules with variables in head",
    ]);
    // OPA keeps the key of a v0 `p[k] = v` head, so its `else` is on a multi-value rule.
    expect(messages('package p\ns["a"] = 1 { true } else = 2 { true }')).toEqual([
      "v0.rego:2:21: rego_parse_error: else keyword cannot be used on multi-value rules",
    ]);
  });
});

describe("Rego v0 keywords", () => {
  it("reads in, every, contains and if as names without an import", () => {
    const module = v0(
      'package p\nin := 1\nevery := 2\nif(x) = x\ncontains(s) { s == "x" }\nr { in == 1; every == 2; contains("x") }',
    );
    expect(module.rules.map((r) => (r.head.ref.type === "var" ? r.head.ref.name : ""))).toEqual([
      "in",
      "every",
      "if",
      "contains",
      "r",
    ]);
  });

  it("enables the keywords one by one with `import future.keywords.<kw>`", () => {
    sameRules(
      "package p\nimport future.keywords.in\nr { 1 in input.xs }",
      "package p\nr if { 1 in input.xs }",
    );
    // `every` is still a name: `every x in xs { … }` does not parse.
    expect(messages("package p\nimport future.keywords.in\nr { every x in input.xs { x > 0 } }")).not.toEqual(
      [],
    );
    sameRules(
      "package p\nimport future.keywords.every\nimport future.keywords.in\nr { every x in input.xs { x > 0 } }",
      "package p\nr if { every x in input.xs { x > 0 } }",
    );
  });

  it("enables all of them with `import future.keywords`", () => {
    sameRules(
      "package p\nimport future.keywords\ns contains x if { some x in input.xs }\nr if every x in input.xs { x > 0 }",
      "package p\ns contains x if { some x in input.xs }\nr if every x in input.xs { x > 0 }",
    );
  });

  it("reads the keyword once imported, not before", () => {
    // `contains(…)` before the import is the builtin; after it, a keyword in a rule head.
    expect(
      messages('package p\nr { contains("abc", "b") }\nimport future.keywords.contains\ns contains 1'),
    ).toEqual([]);
  });

  it("lets an import path end with a v1-only keyword", () => {
    expect(messages("package p\nimport data.lib.contains\nr { contains }")).toEqual([]);
    expect(messages("package p\nimport data.lib.contains", 1)).toEqual([
      "v1.rego:2:17: rego_parse_error: unexpected import path, must not end with a keyword, got: contains",
    ]);
  });
});

describe("import rego.v1 in Rego v0", () => {
  it("enables the keywords and v1's rules", () => {
    sameRules(
      "package p\nimport rego.v1\ns contains x if { some x in input.xs }",
      "package p\ns contains x if { some x in input.xs }",
    );
    expect(messages("package p\nimport rego.v1\nr { true }")).toEqual([
      "v0.rego:3:1: rego_parse_error: `if` keyword is required before rule body",
    ]);
    expect(messages("package p\nimport rego.v1\ns[x] { x := 1 }")).toEqual([
      "v0.rego:3:1: rego_parse_error: `if` keyword is required before rule body",
      "v0.rego:3:1: rego_parse_error: `contains` keyword is required for partial set rules",
    ]);
  });

  it("cannot be aliased", () => {
    expect(messages("package p\nimport rego.v1 as v")).toEqual([
      "v0.rego:2:8: rego_parse_error: `rego` imports cannot be aliased",
    ]);
  });

  it("refuses a v1 keyword as a rule name", () => {
    expect(messages("package p\nimport rego.v1\ncontains := 1")).toEqual([
      "v0.rego:3:1: rego_parse_error: contains keyword cannot be used for rule name",
    ]);
    expect(messages("package p\ncontains := 1", 1)).toEqual([
      "v1.rego:2:1: rego_parse_error: contains keyword cannot be used for rule name",
    ]);
  });
});

describe("the module's Rego version", () => {
  it("marks a v0 module for the compiler's version-dependent checks, unless it imports rego.v1", () => {
    expect(v0("package p\nr { true }").regoVersion).toBe(0);
    expect(v0("package p\nimport rego.v1\nr if { true }").regoVersion).toBeUndefined();
    expect(v1("package p\nr if { true }").regoVersion).toBeUndefined();
  });
});

describe("Rego v0 queries and builds", () => {
  it("parses a query in v0 when asked", () => {
    expect(parseQuery("in := 1", "q.rego", { regoVersion: 0 }).errors).toEqual([]);
    expect(parseQuery("in := 1", "q.rego").errors).not.toEqual([]);
  });

  it("builds and evaluates a v0 policy, each source in its own version", async () => {
    const sources = [
      { file: "lib.rego", source: "package lib\nnames[n] { n := input.users[_].name }\nhas(s, x) { s[x] }" },
      {
        file: "main.rego",
        source: 'package main\nimport data.lib\nallow if { lib.has(lib.names, "ada") }',
        regoVersion: 1 as const,
      },
    ];
    const built = buildPolicy(sources, { entrypoints: ["main/allow"], regoVersion: 0, optimize: false });
    expect(built.errors.map((e) => e.message)).toEqual([]);
    const policy = await loadCompiledPolicy({ wasm: built.wasm!, hostBuiltins: built.hostBuiltins });
    expect(policy.evaluate({ users: [{ name: "ada" }] }, "main/allow")).toEqual([{ result: true }]);
    expect(policy.evaluate({ users: [{ name: "bob" }] }, "main/allow")).toEqual([]);
    expect(buildPolicy(sources, { entrypoints: ["main/allow"] }).errors.length).toBeGreaterThan(0);
  });
});
