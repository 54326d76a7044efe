import { describe, expect, it } from "vitest";
import { call, callValue, errorOf } from "./helpers-net.ts";

describe("deprecated builtins", () => {
  it("all and any look for true", () => {
    expect(call("all", [true, true])).toBe(true);
    expect(call("all", [])).toBe(true);
    expect(call("all", [true, 1])).toBe(false);
    expect(call("any", { set: [false, true] })).toBe(true);
    expect(call("any", [])).toBe(false);
    expect(errorOf("all", "x")).toBe(
      "eval_type_error: all: operand 1 must be one of {array, set} but got string",
    );
  });

  it("casts check the type", () => {
    expect(callValue("cast_set", [1, 1, 2])).toMatchObject({ type: "set", size: 2 });
    expect(callValue("cast_array", { set: [2, 1] })).toMatchObject({ type: "array" });
    expect(call("cast_array", { set: [2, 1] })).toEqual([1, 2]);
    expect(call("cast_string", "a")).toBe("a");
    expect(errorOf("cast_boolean", 1)).toBe(
      "eval_type_error: cast_boolean: operand 1 must be boolean but got number",
    );
    expect(call("cast_null", null)).toBe(null);
    expect(call("cast_object", { a: 1 })).toEqual({ a: 1 });
  });

  it("set_diff is set difference", () => {
    expect(call("set_diff", { set: [1, 2, 3] }, { set: [2] })).toEqual([1, 3]);
    expect(errorOf("set_diff", [1], { set: [] })).toBe(
      "eval_type_error: set_diff: operand 1 must be set but got array",
    );
  });
});
