/**
 * A module whose static data outgrows the memory the SDK creates (`{initial: 5}` pages): it
 * must load through the SDK's stock `loadPolicy` call and answer, and run under the test runner.
 */
import { loadPolicy } from "@open-policy-agent/opa-wasm";
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { runTests } from "../../../src/rego/tester.ts";

const PAGE = 65536;
const CHUNKS = 12;
/** Twelve 40,000-character strings: about 7.5 pages of constants beside the runtime's own. */
const source = `package big

chunks := [${Array.from({ length: CHUNKS }, (_, i) => JSON.stringify(`${i}:`.padEnd(40_000, "x"))).join(", ")}]

last := substring(chunks[${CHUNKS - 1}], 0, 3)

total := sum([count(c) | some c in chunks])

test_total if total == ${CHUNKS * 40_000}

test_last if last == "${CHUNKS - 1}:"
`;

describe("static data beyond the SDK's initial memory", () => {
  it("loads through the stock SDK call, which grows the memory", async () => {
    const built = buildPolicy([{ file: "big.rego", source }], { entrypoints: ["big/last", "big/total"] });
    expect(built.errors).toEqual([]);
    expect(built.wasm!.byteLength).toBeGreaterThan(5 * PAGE);
    const policy = await loadPolicy(built.wasm!);
    expect(policy.evaluate({}, "big/last")).toEqual([{ result: `${CHUNKS - 1}:` }]);
    expect(policy.evaluate({ ignored: true }, "big/total")).toEqual([{ result: CHUNKS * 40_000 }]);
  });

  it("runs the tests of such a policy", async () => {
    const run = await runTests([{ file: "big.rego", source }], {});
    expect(run.errors).toBeUndefined();
    expect(run.results?.map((r) => `${r.test.name}: ${r.status}`)).toEqual([
      "data.big.test_total: PASS",
      "data.big.test_last: PASS",
    ]);
  });
});
