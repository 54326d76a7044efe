/**
 * Host builtins through the real SDK: values cross the boundary exactly (sets stay sets, big
 * numbers stay exact), and strict builtin errors surface with OPA's codes.
 */
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import {
  lookup,
  makeString,
  parseValueText,
  toValueText,
  valueEquals,
} from "../../../src/rego/plan/value.ts";
import { loadCompiledPolicy, PolicyEvaluationError } from "../../../src/rego/policy.ts";

async function evaluate(source: string, input: unknown, strictBuiltinErrors = false): Promise<unknown[]> {
  const built = buildPolicy([{ file: "p.rego", source }], {
    queries: [{ name: "q", query: "x = data.t.p" }],
    strictBuiltinErrors,
  });
  expect(built.errors.map((e) => e.message)).toEqual([]);
  if (!built.wasm) throw new Error("no module");
  const policy = await loadCompiledPolicy({ wasm: built.wasm, hostBuiltins: built.hostBuiltins });
  return policy.evaluate(input, "q");
}

async function failure(source: string, input: unknown): Promise<string> {
  try {
    await evaluate(source, input, true);
  } catch (error) {
    if (error instanceof PolicyEvaluationError) return error.detail;
    throw error;
  }
  throw new Error("the evaluation did not fail");
}

describe("Rego value text", () => {
  it("round-trips sets, non-string keys and exact numbers", () => {
    const value = parseValueText('{"a":{2,1},[1]:set(),3:123456789012345678901234567890.5,"s":"x\\"y"}');
    expect(valueEquals(parseValueText(toValueText(value)), value)).toBe(true);
    expect(toValueText(value)).toContain("3:123456789012345678901234567890.5");
    expect(lookup(value, makeString("a"))?.type).toBe("set");
    expect(parseValueText("{}").type).toBe("object");
    expect(parseValueText("set()").type).toBe("set");
  });
});

describe("host builtins", () => {
  it("see exact numbers and give them back exactly", async () => {
    const source = `package t
p := semver.compare(input.a, input.b)`;
    expect(await evaluate(source, { a: "1.0.0", b: "1.0.1" })).toEqual([{ x: -1 }]);
  });
});

describe("strict builtin errors", () => {
  const count = `package t
p := count(input.x)`;

  it("leave a failing native builtin undefined by default", async () => {
    expect(await evaluate(count, { x: null })).toEqual([]);
  });

  it("abort with eval_type_error and OPA's message when strict", async () => {
    expect(await failure(count, { x: null })).toContain(
      "eval_type_error: count: operand 1 must be one of {array, object, set, string} but got null",
    );
    expect(await evaluate(count, { x: [1, 2] }, true)).toEqual([{ x: 2 }]);
  });

  it("abort with eval_builtin_error for a failing host builtin when strict", async () => {
    const source = `package t
p := semver.compare(input.a, "1.0.0")`;
    expect(await evaluate(source, { a: "not-a-version" })).toEqual([]);
    expect(await failure(source, { a: "not-a-version" })).toMatch(/eval_builtin_error: semver\.compare: /);
  });
});
