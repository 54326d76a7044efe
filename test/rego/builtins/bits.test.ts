import { describe, expect, it } from "vitest";
import { callBuiltin } from "../../../src/rego/builtins/index.ts";
import { numberFromText } from "../../../src/rego/plan/value.ts";
import { callValue, errorOf, evalRego } from "./helpers-net.ts";

function text(name: string, ...args: string[]): string | undefined {
  const r = callBuiltin(name, args.map(numberFromText));
  return r?.type === "number" ? r.text : undefined;
}

describe("bits", () => {
  it("operates on exact integers of any size, two's complement for negatives", () => {
    expect(text("bits.and", "12", "10")).toBe("8");
    expect(text("bits.or", "12", "10")).toBe("14");
    expect(text("bits.xor", "12", "10")).toBe("6");
    expect(text("bits.negate", "7")).toBe("-8");
    expect(text("bits.and", "-1", "255")).toBe("255");
    expect(text("bits.lsh", "9223372036854775807", "1")).toBe("18446744073709551614");
    expect(text("bits.lsh", "1", "100")).toBe("1267650600228229401496703205376");
    expect(text("bits.rsh", "-9", "1")).toBe("-5");
    expect(text("bits.and", "1.0", "3")).toBe("1");
    expect(callValue("bits.rsh", 1, 70)).toMatchObject({ text: "0" });
  });

  it("reports OPA's operand errors", () => {
    expect(errorOf("bits.and", 7.2, 42)).toBe(
      "eval_type_error: bits.and: operand 1 must be integer number but got floating-point number",
    );
    expect(errorOf("bits.lsh", 7, -1)).toBe(
      "eval_type_error: bits.lsh: operand 2 must be an unsigned integer number but got a negative integer",
    );
    expect(errorOf("bits.rsh", 7, 1.5)).toBe(
      "eval_type_error: bits.rsh: operand 2 must be integer number but got floating-point number",
    );
    expect(errorOf("bits.negate", "x")).toBe(
      "eval_type_error: bits.negate: operand 1 must be integer but got string",
    );
  });

  it("runs through the SDK", async () => {
    expect(await evalRego("r := [bits.lsh(1, 3), bits.negate(0)]")).toEqual([8, -1]);
  });
});

describe("bits.lsh limits", () => {
  it("fails instead of crashing on shifts beyond what a BigInt can hold", () => {
    expect(errorOf("bits.lsh", 1, 4e18)).toBe(
      "eval_builtin_error: bits.lsh: shift amount too large: 4000000000000000000",
    );
    expect(text("bits.lsh", "0", "4000000000000000000")).toBe("0");
  });
});
