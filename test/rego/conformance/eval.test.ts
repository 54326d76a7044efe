import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConformanceCases, loadExceptions } from "../../../src/rego/conformance/cases.ts";
import { evalStage } from "../../../src/rego/conformance/eval-stage.ts";
import { formatReport, runConformance } from "../../../src/rego/conformance/runner.ts";
import { conformanceCasesDir, hasConformanceCases } from "../../support/paths.ts";

/** The core-language folders; each must pass at least 95% of the cases it runs. */
const CORE_FOLDERS = [
  "assignments",
  "baseandvirtualdocs",
  "completedoc",
  "compositebasedereference",
  "compositereferences",
  "comprehensions",
  "defaultkeyword",
  "elsekeyword",
  "every",
  "evaltermexpr",
  "functions",
  "negation",
  "nestedreferences",
  "partialobjectdoc",
  "partialsetdoc",
  "refheads",
  "undos",
  "virtualdocs",
  "withkeyword",
];

describe.skipIf(!hasConformanceCases)("conformance, eval stage through the opa-wasm SDK", () => {
  it("passes at least 95% of every core folder and 75% of all cases", async () => {
    const { cases, broken } = await loadConformanceCases(conformanceCasesDir);
    const exceptions = await loadExceptions(
      path.join(path.dirname(conformanceCasesDir), "wasm-e2e-exceptions.yaml"),
    );
    const report = await runConformance(evalStage, cases, broken, { exceptions });
    console.log(formatReport(report));
    const rate = (t: { passed: number; failed: number }) => t.passed / Math.max(1, t.passed + t.failed);
    const weak = CORE_FOLDERS.filter((d) => report.by_dir[d] && rate(report.by_dir[d]!) < 0.95).map(
      (d) => `${d}: ${(100 * rate(report.by_dir[d]!)).toFixed(1)}%`,
    );
    expect(weak).toEqual([]);
    expect(rate(report)).toBeGreaterThanOrEqual(0.75);
  }, 240_000);
});
