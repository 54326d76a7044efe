/**
 * The checks `opa check` makes (`checkSources`): OPA's compile errors for every Rego v1 module,
 * and with strict mode the unused arguments, assignments and imports, each at OPA's place.
 */
import { describe, expect, it } from "vitest";
import { checkSources } from "../../../src/rego/check.ts";

function check(source: string, strict = false): string[] {
  return checkSources([{ file: "t.rego", source }], { strict }).map((e) => e.message);
}

describe("writ policy check's compile checks", () => {
  it("reports undefined functions, arity and the type errors literals show", () => {
    expect(check("package t\n\np := data.lib.f(1)\n\nq := nope(1)\n\nr := count(1, 2)\n")).toEqual([
      "t.rego:3:6: rego_type_error: undefined function data.lib.f",
      "t.rego:5:6: rego_type_error: undefined function nope",
      "t.rego:7:6: rego_type_error: count: arity mismatch\n\thave: 2 arguments\n\twant: 1 argument",
    ]);
  });

  it("reports duplicate imports, deprecated builtins and declared vars never used", () => {
    const source = `package t

import data.a
import data.b.a

p if any([true])

q if {
  some x
  a.y
}

r if every v in [1] { true }
`;
    expect(check(source)).toEqual([
      "t.rego:4:1: rego_compile_error: import must not shadow import data.a",
      "t.rego:6:6: rego_type_error: deprecated built-in function calls in expression: any",
      "t.rego:9:3: rego_compile_error: declared var x unused",
      "t.rego:13:23: rego_compile_error: declared var v unused",
    ]);
  });

  it("reports what shadows a root document or an argument, and assignments under not", () => {
    const source = `package t

input := 1

f(data) := 1

g(x) := y if {
  x := 2
  y := [x | x := 3]
}

p if not z := 1
`;
    expect(check(source)).toEqual([
      "t.rego:3:1: rego_compile_error: rules must not shadow input (use a different rule name)",
      "t.rego:5:3: rego_compile_error: args must not shadow data (use a different variable name)",
      "t.rego:8:3: rego_compile_error: arg x redeclared",
      "t.rego:12:6: rego_compile_error: cannot assign vars inside negated expression",
    ]);
  });

  it("leaves unused arguments, assignments and imports to strict mode", () => {
    const source = `package t

import data.unused
import data.used

f(x, y) := y

p if {
  z := 1
  used.flag
}

q := f(1, 2)
`;
    expect(check(source)).toEqual([]);
    expect(check(source, true)).toEqual([
      "t.rego:3:1: rego_compile_error: import data.unused unused",
      "t.rego:6:1: rego_compile_error: unused argument x. (hint: use _ (wildcard variable) instead)",
      "t.rego:9:3: rego_compile_error: assigned var z unused",
    ]);
  });

  it("counts a use anywhere: head, nested bodies, other arguments, another else branch", () => {
    const source = `package t

import data.lib

same(a, a) := true

g(x) := 1 if false
else := x

p := [y | y := lib.n[_]]

q := w if {
  w := 1
  not w == 2
}

r := same(1, 1)

s := g(2)
`;
    expect(check(source, true)).toEqual([]);
  });
});
