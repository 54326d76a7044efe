/** `units.parse` and `units.parse_bytes`: OPA's suffixes, case rules, exact results and errors. */
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { BuiltinError, builtinTable, systemContext } from "../../../src/rego/builtins/index.ts";
import { makeString, numberFromText, toJSONText, type Value } from "../../../src/rego/plan/value.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";

/** The result as exact JSON text, or the error as `code: message`. */
function run(name: string, arg: Value): string {
  try {
    const r = builtinTable.get(name)!.impl(
      [arg],
      systemContext(() => 0n),
    );
    return r === undefined ? "undefined" : toJSONText(r);
  } catch (e) {
    if (e instanceof BuiltinError) return `${e.code}: ${e.message}`;
    throw e;
  }
}

const parse = (x: string) => run("units.parse", makeString(x));
const bytes = (x: string) => run("units.parse_bytes", makeString(x));

describe("units.parse", () => {
  it("tells milli from mega and lowercases only after the first letter", () => {
    expect(parse("100m")).toBe("0.1000000000");
    expect(parse("100M")).toBe("100000000");
    expect(parse('"100TI"')).toBe("109951162777600");
    expect(parse("10KI")).toBe("10240");
    expect(parse("10e")).toBe("10000000000000000000");
    expect(parse("5E")).toBe("5000000000000000000");
  });

  it("is exact: integers without decimals, fractions to ten places", () => {
    expect(parse("10Ei")).toBe("11529215046068469760");
    expect(parse("1.1Ki")).toBe("1126.4000000000");
    expect(parse("0.0000005M")).toBe("0.5000000000");
    expect(parse("-3.5E2m")).toBe("-0.3500000000");
    expect(parse("1e-11")).toBe("0.0000000000");
    expect(parse("0.00000000005")).toBe("0.0000000001");
    expect(parse("2.5e3K")).toBe("2500000");
    expect(parse(".5K")).toBe("500");
  });

  it("reports OPA's errors", () => {
    expect(parse("")).toBe("eval_builtin_error: units.parse: units.parse: no amount provided");
    expect(parse("foo")).toContain("no amount provided");
    expect(parse("0.0.0")).toContain("could not parse amount to a number");
    expect(parse("100 k")).toContain("spaces not allowed in resource strings");
    expect(parse("10e10000000Ei")).toContain("exponent too large");
    expect(parse("10Kb")).toContain("unit Kb not recognized");
    expect(run("units.parse", numberFromText("1"))).toBe(
      "eval_type_error: units.parse: operand 1 must be string but got number",
    );
  });
});

describe("units.parse_bytes", () => {
  it("parses decimal and binary byte units, truncating fractions", () => {
    expect(bytes("10eib")).toBe("11529215046068469760");
    expect(bytes("10EI")).toBe("11529215046068469760");
    expect(bytes("1.5KiB")).toBe("1536");
    expect(bytes("1.1")).toBe("1");
    expect(bytes("2e3kb")).toBe("2000000");
    expect(bytes("1e-400")).toBe("0");
  });

  it("reports OPA's errors", () => {
    expect(bytes("GB")).toBe(
      "eval_builtin_error: units.parse_bytes: units.parse_bytes: no byte amount provided",
    );
    expect(bytes(".5.2")).toContain("could not parse byte amount to a number");
    expect(bytes("100 kb")).toContain("spaces not allowed");
    expect(bytes("10e10000000EiB")).toContain("exponent too large");
    expect(bytes("10xb")).toContain("byte unit xb not recognized");
  });
});

describe("end to end", () => {
  it("runs units.parse as a host call of a compiled policy", async () => {
    const built = buildPolicy(
      [
        {
          file: "u.rego",
          source: `package u\nr := [units.parse("500m") == 0.5, units.parse("300Gi"), units.parse_bytes("2MB")]`,
        },
      ],
      { entrypoints: ["u/r"] },
    );
    expect(built.errors).toEqual([]);
    const policy = await loadCompiledPolicy({ wasm: built.wasm!, hostBuiltins: built.hostBuiltins });
    expect(policy.evaluate({}, "u/r")).toEqual([{ result: [true, 322122547200, 2000000] }]);
  });
});
