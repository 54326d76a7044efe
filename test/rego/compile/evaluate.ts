/**
 * End-to-end helpers for the compiler's semantics: Rego sources built to WebAssembly with
 * `buildPolicy` and evaluated with the official opa-wasm SDK.
 */
import { expect } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";

type Sources = string | ReadonlyArray<{ file: string; source: string }>;

function sourcesOf(sources: Sources): Array<{ file: string; source: string }> {
  return typeof sources === "string" ? [{ file: "t.rego", source: sources }] : [...sources];
}

/** The result set of `query` (`x = data.t.p`) for `input`, `[]` when undefined. */
export async function evaluate(sources: Sources, query: string, input?: unknown): Promise<unknown[]> {
  const built = buildPolicy(sourcesOf(sources), { queries: [{ name: "q", query }] });
  expect(built.errors.map((e) => e.message)).toEqual([]);
  const policy = await loadCompiledPolicy({ wasm: built.wasm!, hostBuiltins: built.hostBuiltins });
  return policy.evaluate(input, "q");
}

/** The value `query` binds to `x`, or undefined. */
export async function resultOf(sources: Sources, query: string, input?: unknown): Promise<unknown> {
  const [first] = (await evaluate(sources, query, input)) as Array<{ x?: unknown } | undefined>;
  return first?.x;
}

/** The messages of the errors building `sources` reports (none when it compiles). */
export function buildErrors(sources: Sources, entrypoint = "t/p"): string[] {
  return buildPolicy(sourcesOf(sources), { entrypoints: [entrypoint] }).errors.map((e) => e.message);
}
