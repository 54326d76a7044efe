/**
 * Evaluation helpers for the syntax tests: a module's rule through the whole pipeline to
 * WebAssembly and the SDK (`wasmRule`), or through the plan interpreter (`planRule`), which
 * passes exact values to host builtins (sets stay sets).
 */
import { expect } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { compile } from "../../../src/rego/compile/index.ts";
import { interpret } from "../../../src/rego/plan/interpreter.ts";
import { plan } from "../../../src/rego/plan/planner.ts";
import { fromJSON, makeObject, toJSON } from "../../../src/rego/plan/value.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";
import { parseModule, parseQuery } from "../../../src/rego/syntax/index.ts";

/** The value of `entrypoint` (`p/r`) for `input`, built to Wasm and run in the SDK. */
export async function wasmRule(source: string, entrypoint: string, input: unknown = {}): Promise<unknown> {
  const built = buildPolicy([{ file: "p.rego", source }], { entrypoints: [entrypoint], optimize: false });
  expect(built.errors.map((e) => e.message)).toEqual([]);
  const policy = await loadCompiledPolicy({ wasm: built.wasm!, hostBuiltins: built.hostBuiltins });
  const [result] = policy.evaluate(input, entrypoint) as Array<{ result: unknown }>;
  return result?.result;
}

/** The value of `rule` (`data.p.r`) for `input`, through the plan interpreter. */
export function planRule(source: string, rule: string, input: unknown = {}): unknown {
  const parsed = parseModule(source, "p.rego");
  expect(parsed.errors.map((e) => e.message)).toEqual([]);
  const query = parseQuery(`x = ${rule}`, "query.rego");
  const compiled = compile([parsed.module!], [{ name: "query", body: query.body! }]);
  expect(compiled.errors.map((e) => e.message)).toEqual([]);
  const planned = plan(compiled.policy!, [{ name: "query", query: "query" }]);
  expect(planned.errors.map((e) => e.message)).toEqual([]);
  const bindings = interpret(planned.plan, "query", fromJSON(input), makeObject(), {
    now: () => 1_700_000_000_000_000_000n,
  });
  const [first] = bindings.map(toJSON) as Array<{ x: unknown } | undefined>;
  return first?.x;
}

/** The messages of the errors parsing `source` reports. */
export function parseMessages(source: string): string[] {
  return parseModule(source, "p.rego").errors.map((e) => e.message);
}
