/**
 * `data[key]` with a key chosen at run time, below which rules live: OPA accepts a rule that
 * reads data this way (it is not recursive), and only the document the key selects is evaluated.
 */
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";

const source = `package tenants

items := data[input.namespace].items

count_items := count(items)

acme.items := ["virtual"]

first := data.tenants.acme[input.key][0]
`;

async function evaluate(query: string, input: unknown): Promise<unknown[]> {
  const built = buildPolicy([{ file: "t.rego", source }], { queries: [{ name: "q", query }] });
  expect(built.errors.map((e) => e.message)).toEqual([]);
  if (!built.wasm) throw new Error("no module");
  const policy = await loadCompiledPolicy({
    wasm: built.wasm,
    hostBuiltins: built.hostBuiltins,
    data: { globex: { items: [1, 2, 3] }, initech: { items: [] } },
  });
  return policy.evaluate(input, "q");
}

describe("a data reference with a run-time key", () => {
  it("compiles, and reads the base document the key selects", async () => {
    expect(await evaluate("x = data.tenants.count_items", { namespace: "globex" })).toEqual([{ x: 3 }]);
    expect(await evaluate("x = data.tenants.items", { namespace: "initech" })).toEqual([{ x: [] }]);
    expect(await evaluate("x = data.tenants.items", { namespace: "nobody" })).toEqual([]);
  });

  it("reaches a rule under the key, and enumerates the keys below it", async () => {
    expect(await evaluate("x = data.tenants.first", { key: "items" })).toEqual([{ x: "virtual" }]);
    expect(await evaluate("x = data.tenants.first", { key: "other" })).toEqual([]);
    expect(await evaluate("x = data.tenants.acme[k]", {})).toEqual([{ k: "items", x: ["virtual"] }]);
  });
});
