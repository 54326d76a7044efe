import { describe, expect, it } from "vitest";
import { compile, type KExpr, type KRule } from "../../../src/rego/compile/index.ts";
import type { Module } from "../../../src/rego/syntax/ast.ts";
import { parseModule, parseQuery } from "../../../src/rego/syntax/index.ts";

function modules(...sources: string[]): Module[] {
  return sources.map((source, i) => {
    const { module, errors } = parseModule(source, `m${i}.rego`);
    if (!module) throw new Error(errors.map((e) => e.message).join("\n"));
    return module;
  });
}

function errorsOf(...sources: string[]): string[] {
  return compile(modules(...sources)).errors.map((e) => e.message);
}

function rulesAt(sources: string[], path: string): KRule[] {
  const { policy, errors } = compile(modules(...sources));
  expect(errors.map((e) => e.message)).toEqual([]);
  return policy!.groups.get(path)!.rules;
}

describe("compile: safety", () => {
  it("reports unsafe vars at their position, once per var", () => {
    expect(errorsOf("package t\np if {\n  x > 1\n  y == x\n}")).toEqual([
      "m0.rego:3:3: rego_unsafe_var_error: var x is unsafe",
      "m0.rego:4:3: rego_unsafe_var_error: var y is unsafe",
    ]);
  });

  it("reports head vars the body never binds", () => {
    expect(errorsOf("package t\np contains x if { true }")).toEqual([
      "m0.rego:2:12: rego_unsafe_var_error: var x is unsafe",
    ]);
  });

  it("requires named vars under `not` to be bound", () => {
    expect(errorsOf("package t\nq := {1}\np if { not q[x] }")).toEqual([
      "m0.rego:3:14: rego_unsafe_var_error: var x is unsafe",
    ]);
    expect(errorsOf("package t\nq := {1}\np if { not q[_] }")).toEqual([]);
  });

  it("reorders a body so that every var is bound before it is read", () => {
    const [rule] = rulesAt(["package t\np := y if {\n  y = x + 1\n  x = input.n\n}"], "t/p");
    const kinds = rule!.body.map((e: KExpr) => e.kind);
    // x = input.n first, then the addition into a temporary, then y.
    expect(kinds).toEqual(["unify", "call", "unify"]);
    const first = rule!.body[0]!;
    expect(first.kind === "unify" && first.right.type === "ref").toBe(true);
  });

  it("lets comprehensions read outer vars and keeps their own vars local", () => {
    expect(
      errorsOf("package t\np := ys if {\n  n := 2\n  ys := [y | some x in [1, 2, 3]; y := x * n]\n}"),
    ).toEqual([]);
    expect(errorsOf("package t\np := ys if { ys := [y | y > 1] }")).toEqual([
      "m0.rego:2:25: rego_unsafe_var_error: var y is unsafe",
    ]);
  });
});

describe("compile: declarations and names", () => {
  it("rejects assigning a var twice in one scope", () => {
    expect(errorsOf("package t\np if {\n  x := 1\n  x := 2\n}")).toEqual([
      "m0.rego:4:3: rego_compile_error: var x assigned above",
    ]);
  });

  it("resolves rules of the package, imports and aliases to data refs", () => {
    const [rule] = rulesAt(
      [
        "package t\nimport data.lib.limits as l\np if { q; l.max > 1 }\nq := true",
        "package lib.limits\nmax := 3",
      ],
      "t/p",
    );
    const text = JSON.stringify(rule!.body, (k, v) => (k === "loc" ? undefined : v));
    expect(text).toContain('"name":"data"');
    expect(text).toContain('"value":"lib"');
    expect(text).toContain('"value":"q"');
  });

  it("reports unknown functions and builtin arity mismatches as type errors", () => {
    expect(errorsOf("package t\np if { nope(1) }")).toEqual([
      "m0.rego:2:8: rego_type_error: undefined function nope",
    ]);
    expect(errorsOf('package t\np if { startswith("a") }')[0]).toMatch(
      /^m0\.rego:2:8: rego_type_error: startswith: arity mismatch/,
    );
  });
});

describe("compile: documents", () => {
  it("groups rules by document and rejects conflicting kinds", () => {
    expect(errorsOf("package t\np := 1\np contains 2")).toEqual([
      "m0.rego:3:1: rego_type_error: conflicting rules data.t.p found",
    ]);
    expect(errorsOf("package t\nf(x) := x\nf(x, y) := x")).toEqual([
      "m0.rego:3:1: rego_type_error: conflicting rules data.t.f found",
    ]);
    expect(errorsOf("package t\ndefault p := 1\ndefault p := 2")).toEqual([
      "m0.rego:3:1: rego_type_error: multiple default rules data.t.p found",
    ]);
  });

  it("rejects recursion, naming the cycle", () => {
    expect(errorsOf("package t\np if q\nq if p")).toEqual([
      "m0.rego:2:1: rego_recursion_error: rule data.t.p is recursive: data.t.p -> data.t.q -> data.t.p",
    ]);
    expect(errorsOf("package t\nf(x) := f(x)")[0]).toMatch(
      /rego_recursion_error: rule data\.t\.f is recursive/,
    );
  });

  it("compiles queries with their user-visible vars as outputs", () => {
    const { body } = parseQuery("data.t.p = x; y := x + 1", "q.rego");
    const { policy, errors } = compile(modules("package t\np := 1"), [{ name: "q", body: body! }]);
    expect(errors).toEqual([]);
    expect(policy!.queries[0]!.outputs.map((o) => o.name).sort()).toEqual(["x", "y"]);
  });
});
