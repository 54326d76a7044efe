import { describe, expect, it } from "vitest";
import { call, errorOf, evalRego } from "./helpers-net.ts";

describe("semver", () => {
  it("accepts SemVer 2.0.0 with an optional leading v", () => {
    for (const ok of ["1.0.0", "v1.2.3", "0.0.0", "1.2.3-0", "1.2.3-0a", "1.2.3+01", "1.0.0-alpha.1+build.5"])
      expect(call("semver.is_valid", ok), ok).toBe(true);
    for (const bad of [
      "1",
      "1.0",
      "01.2.3",
      "1.02.3",
      "1.2.03",
      "1.2.3-01",
      "1.2.3-alpha.01",
      "1.2.3-",
      "1.2.3+",
      "1.2.3-a..b",
      "9223372036854775808.0.0",
    ])
      expect(call("semver.is_valid", bad), bad).toBe(false);
    expect(call("semver.is_valid", 1)).toBe(false);
  });

  it("compares by precedence, ignoring build metadata", () => {
    expect(call("semver.compare", "1.0.0", "1.0.1")).toBe(-1);
    expect(call("semver.compare", "1.0.0-alpha", "1.0.0")).toBe(-1);
    expect(call("semver.compare", "1.0.0-alpha.1", "1.0.0-alpha")).toBe(1);
    expect(call("semver.compare", "1.0.0-2", "1.0.0-10")).toBe(-1);
    expect(call("semver.compare", "1.0.0-2", "1.0.0-a")).toBe(-1);
    expect(call("semver.compare", "1.2.3+01", "1.2.3+2")).toBe(0);
  });

  it("reports invalid operands quoted, as OPA", () => {
    expect(errorOf("semver.compare", "1.02.3", "1.2.3")).toBe(
      'eval_builtin_error: semver.compare: operand 1: string "1.02.3" is not a valid SemVer',
    );
    expect(errorOf("semver.compare", "1.2.3", "1")).toBe(
      'eval_builtin_error: semver.compare: operand 2: string "1" is not a valid SemVer',
    );
  });

  it("runs through the SDK", async () => {
    expect(await evalRego(`r := [semver.compare("1.0.0", "0.9.9"), semver.is_valid("1.2.3-")]`)).toEqual([
      1,
      false,
    ]);
  });
});
