/** The test runner (`writ policy test`'s engine): what it runs, skips and reports. */
import { describe, expect, it } from "vitest";
import { runTests, testError } from "../../src/rego/tester.ts";

const source = `package p_test

test_plain if true

todo_test_later if false

# OPA runs this as one test with a result per case; Writ reports it skipped, never silently.
test_cases[name] if {
\tsome name, want in {"one": 1, "two": 2}
\tcount(name) == 3
\twant > 0
}
`;

describe("runTests", () => {
  it("reports a parametrized test as skipped, with why, instead of leaving it out", async () => {
    const run = await runTests([{ file: "p_test.rego", source }], {});
    expect(run.results?.map((r) => [r.test.name, r.status, r.detail])).toEqual([
      ["data.p_test.test_plain", "PASS", undefined],
      ["data.p_test.todo_test_later", "SKIPPED", undefined],
      [
        "data.p_test.test_cases",
        "SKIPPED",
        "a parametrized test (test_x[case]) is not run by writ policy test yet: write one test_ rule per case",
      ],
    ]);
    expect(run.timings.compileMs).toBeGreaterThan(0);
  });

  it("reads an evaluation error as OPA's error object", () => {
    expect(testError("p.rego:3:1: var assignment conflict")).toEqual({
      code: "eval_conflict_error",
      message: "var assignment conflict",
      location: { file: "p.rego", row: 3, col: 1 },
    });
    expect(testError("eval_builtin_error: acme.refuse: refused: no")).toEqual({
      code: "eval_builtin_error",
      message: "acme.refuse: refused: no",
    });
  });
});
