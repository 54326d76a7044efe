/**
 * Negation over dynamic terms, as OPA's compiler rewrites it (`RewriteExprTerms` and
 * `RewriteDynamicTerms`): the refs and nested calls of a negated expression are evaluated before
 * its `not`, so an undefined one leaves the expression undefined; `==` in a rule keeps its refs
 * (`RewriteEquals` makes it a unification); `import future.keywords.not` negates the whole
 * expansion instead. Built to Wasm and evaluated with the SDK.
 */
import { describe, expect, it } from "vitest";
import { resultOf } from "./evaluate.ts";

const legacy = `package t

allowed contains "bob"

blocked contains "eve"

flagged if not startswith(input.image, "corp/")

denied if not allowed[input.name]

allow if not blocked[input.user]

not_admin if not "admin" in input.roles

empty if not count(input.xs) > 0

not_two if not input.x == 2

some_name_without_a if not startswith(input.names[_], "a")

in_comprehension := [1 | not startswith(input.image, "corp/")]

in_every if every n in [1] { not startswith(input.image, "corp/") }

under_with if not startswith(input.image, "corp/") with input.other as 1

call_head if not object.get(input.m, "k", {}).missing
`;

describe("negation over dynamic terms (legacy negation)", () => {
  it("evaluates a call's ref arguments before the `not`", async () => {
    expect(await resultOf(legacy, "x = data.t.flagged", {})).toBeUndefined();
    expect(await resultOf(legacy, "x = data.t.flagged", { image: "docker.io/x" })).toBe(true);
    expect(await resultOf(legacy, "x = data.t.flagged", { image: "corp/x" })).toBeUndefined();
    expect(await resultOf(legacy, "x = data.t.not_admin", {})).toBeUndefined();
    expect(await resultOf(legacy, "x = data.t.not_admin", { roles: ["dev"] })).toBe(true);
  });

  it("evaluates a ref's dynamic keys before the `not`", async () => {
    expect(await resultOf(legacy, "x = data.t.denied", {})).toBeUndefined();
    expect(await resultOf(legacy, "x = data.t.denied", { name: "mallory" })).toBe(true);
    expect(await resultOf(legacy, "x = data.t.allow", {})).toBeUndefined();
    expect(await resultOf(legacy, "x = data.t.allow", { user: "bob" })).toBe(true);
    expect(await resultOf(legacy, "x = data.t.allow", { user: "eve" })).toBeUndefined();
  });

  it("evaluates nested calls before the `not`, and keeps `==` in a rule a unification", async () => {
    expect(await resultOf(legacy, "x = data.t.empty", {})).toBeUndefined();
    expect(await resultOf(legacy, "x = data.t.empty", { xs: [] })).toBe(true);
    expect(await resultOf(legacy, "x = data.t.not_two", {})).toBe(true);
    expect(await resultOf(legacy, "x = data.t.call_head", {})).toBeUndefined();
    expect(await resultOf(legacy, "x = data.t.call_head", { m: {} })).toBe(true);
  });

  it("iterates a hoisted ref outside the `not`", async () => {
    // Some name does not start with "a" (OPA), not "no name starts with a".
    expect(await resultOf(legacy, "x = data.t.some_name_without_a", { names: ["ab", "b"] })).toBe(true);
    expect(await resultOf(legacy, "x = data.t.some_name_without_a", { names: ["ab"] })).toBeUndefined();
  });

  it("hoists within comprehension and `every` bodies, and under `with`", async () => {
    expect(await resultOf(legacy, "x = data.t.in_comprehension", {})).toEqual([]);
    expect(await resultOf(legacy, "x = data.t.in_comprehension", { image: "x" })).toEqual([1]);
    expect(await resultOf(legacy, "x = data.t.in_every", {})).toBeUndefined();
    expect(await resultOf(legacy, "x = data.t.in_every", { image: "x" })).toBe(true);
    expect(await resultOf(legacy, "x = data.t.under_with", {})).toBeUndefined();
    expect(await resultOf(legacy, "x = data.t.under_with", { image: "x" })).toBe(true);
  });

  it("treats `==` in a query as a call (no RewriteEquals there)", async () => {
    expect(await resultOf("package t", "not input.x == 1; x := true", {})).toBeUndefined();
    expect(await resultOf("package t", "not input.x == 1; x := true", { x: 2 })).toBe(true);
  });
});

describe("improved negation (import future.keywords.not)", () => {
  const improved = `package t

import future.keywords.not

flagged if not startswith(input.image, "corp/")

empty if not count(input.xs) > 0
`;

  it("negates the whole expansion, so an undefined operand makes the `not` hold", async () => {
    expect(await resultOf(improved, "x = data.t.flagged", {})).toBe(true);
    expect(await resultOf(improved, "x = data.t.flagged", { image: "corp/x" })).toBeUndefined();
    expect(await resultOf(improved, "x = data.t.empty", {})).toBe(true);
  });
});
