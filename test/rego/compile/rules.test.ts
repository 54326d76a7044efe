/**
 * Rule heads as OPA reads them: a function head without arguments defines an ordinary rule
 * (its value is part of the document, read as a ref or called), and a var named twice among a
 * function's arguments is one var. Built to Wasm and evaluated with the SDK.
 */
import { describe, expect, it } from "vitest";
import { buildErrors, resultOf } from "./evaluate.ts";

describe("a function head without arguments", () => {
  const zeroArgs = `package t

cfg() := {"a": 1}

by_ref := cfg.a

by_call := cfg().a

as_condition if cfg()

with_output := x if cfg(x)

chained() := 1 if input.never
else := 2

default fallback() := 3

two() := 1 if input.one

two() := 2 if input.two

mocked := x if x := cfg.a with cfg as {"a": 5}
`;

  it("is a rule: read as a ref, called, and part of the package's document", async () => {
    expect(await resultOf(zeroArgs, "x = data.t", {})).toEqual({
      cfg: { a: 1 },
      by_ref: 1,
      by_call: 1,
      as_condition: true,
      with_output: { a: 1 },
      chained: 2,
      fallback: 3,
      mocked: 5,
    });
  });

  it("takes several definitions like a complete rule", async () => {
    expect(await resultOf(zeroArgs, "x = data.t.two", { two: true })).toBe(2);
    await expect(resultOf(zeroArgs, "x = data.t.two", { one: true, two: true })).rejects.toThrow(
      "complete rules must not produce multiple outputs: rule data.t.two produced conflicting values",
    );
  });

  it("can be called with a value defined as a rule, as OPA lets any rule be", async () => {
    expect(await resultOf("package t\n\nlimit := 10\n\np := limit() + 1", "x = data.t.p")).toBe(11);
  });
});

describe("a var named twice among a function's arguments", () => {
  const same = `package t

same(x, x) := true

pair([a, b], a) := b

yes if same(1, 1)

no if same(1, 2)

second := pair([1, "one"], 1)
`;

  it("unifies: the second occurrence must equal the first", async () => {
    expect(buildErrors(same, "t/yes")).toEqual([]);
    expect(await resultOf(same, "x = data.t.yes")).toBe(true);
    expect(await resultOf(same, "x = data.t.no")).toBeUndefined();
    expect(await resultOf(same, "x = data.t.second")).toBe("one");
  });
});
