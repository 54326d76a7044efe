/**
 * Rules written `f() := …`: as in OPA (`Rule.isFunction` is false without arguments,
 * open-policy-agent/opa#6315), they are complete rules, read as `f`; a call `f()` evaluates
 * them too (OPA accepts such calls when its type checker cannot tell the rule's type).
 */
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";

async function evaluate(source: string, query: string): Promise<unknown[]> {
  const built = buildPolicy([{ file: "p.rego", source }], {
    queries: [{ name: "q", query }],
    optimize: false,
  });
  expect(built.errors.map((e) => e.message)).toEqual([]);
  const policy = await loadCompiledPolicy({ wasm: built.wasm!, hostBuiltins: built.hostBuiltins });
  return policy.evaluate({ name: "ada" }, "q");
}

describe("rules without arguments", () => {
  const source = 'package p\nf() := {"a": 1}\ng() := x if { x := input.name }\nh() if false\n';

  it("are values under their name", async () => {
    expect(await evaluate(source, "x = data.p.f.a; y = data.p.g")).toEqual([{ x: 1, y: "ada" }]);
    expect(await evaluate(source, "x = data.p")).toEqual([{ x: { f: { a: 1 }, g: "ada" } }]);
  });

  it("are their value when called", async () => {
    expect(await evaluate(source, "x := data.p.f(); y := data.p.g()")).toEqual([{ x: { a: 1 }, y: "ada" }]);
    expect(await evaluate(source, "not data.p.h()")).toEqual([{}]);
  });
});
