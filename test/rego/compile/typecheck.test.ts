/** Builtin calls are checked against OPA's declared types where a literal shows the type. */
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";

function errorsOf(body: string): string[] {
  const built = buildPolicy([{ file: "t.rego", source: `package t\n\n${body}\n` }], { entrypoints: ["t"] });
  return built.errors.map((e) => e.message);
}

describe("compile-time type checks of builtin calls", () => {
  it("reports a literal of the wrong type once, with the declared types", () => {
    expect(errorsOf("x := count(1)")).toEqual([
      "t.rego:3:6: rego_type_error: count: invalid argument(s)\n\thave: (number)\n\twant: (any<string, array[any], object[any: any], set[any]>)",
    ]);
    expect(errorsOf('x := "a" + 1')).toEqual([
      "t.rego:3:6: rego_type_error: plus: invalid argument(s)\n\thave: (string, number)\n\twant: (number, number)",
    ]);
    expect(errorsOf('x := regex.match(["a"], "b")')).toHaveLength(1);
  });

  it("accepts literals the declaration admits, and leaves run-time values to the builtin", () => {
    expect(errorsOf('x := count({1, 2})\ny := concat(",", {"a"})\nz := count(input.any)')).toEqual([]);
    expect(errorsOf('w := object.get({"a": 1}, "a", null)\nv := count([x | x := [1][_]])')).toEqual([]);
    expect(errorsOf("u := {1, 2} - {1}\nt := 3 - 1")).toEqual([]);
  });

  it("reports an unknown function or an unavailable builtin once, with the reason", () => {
    expect(errorsOf("x := foo(1)")).toEqual(["t.rego:3:6: rego_type_error: undefined function foo"]);
    expect(errorsOf('x := http.send({"method": "get", "url": "https://example.com"})')).toEqual([
      "t.rego:3:6: rego_type_error: http.send is not available to Writ policies: a policy decision must not wait on the network; fetch the data into the input or data instead (in tests, replace it with `with`)",
    ]);
  });
});
