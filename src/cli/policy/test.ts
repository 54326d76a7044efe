/** `writ policy test`: run the `test_…` rules of a policy, as `opa test` does. */
import { parseArgs } from "node:util";
import { z } from "zod";
import { runTests, type TestCoverage, type TestResult, type TestStatus } from "../../rego/tester.ts";
import { checkArgs, helpOption, parseCommandArgs, usageError, v0Compatible } from "./args.ts";
import { loadPolicyInputs } from "./inputs.ts";
import { reportFailure, reportRegoErrors } from "./output.ts";

const command = "writ policy test";

export const testUsage = `usage: writ policy test <path>... [-v] [--run <regex>] [--coverage [--format text|json]] [--v0-compatible]

Runs every rule named test_… in every package under the paths (folders are searched for .rego
files; data.json/data.yaml files are merged into data at their folder's path). A test passes
when it is defined and not false; it runs with no input, so set one with \`with input as …\`.
Rules named todo_test_… are reported as skipped. Prints one line per test and a summary; the
exit code is 1 when any test fails or errors (or none is found).

options:
  -v, --verbose        group tests by file, say where each is defined, and show the print()
                       output of passing tests too (failing tests always show theirs)
      --run <regex>    run only the tests whose name (data.pkg.test_name) matches
      --coverage       also report which rules and body lines the tests evaluated: a line
                       holding an expression is covered once it was evaluated, a rule's head
                       once the rule produced a value (the policy is built instrumented)
      --format <f>     with --coverage: text (the tests, then coverage per file and the rules
                       no test reached; default) or json (only the report, in the shape of
                       \`opa test --coverage\`)
${v0Compatible.usage}
  -h, --help           show this text`;

const options = {
  verbose: { type: "boolean", short: "v" },
  run: { type: "string" },
  coverage: { type: "boolean" },
  format: { type: "string" },
  ...v0Compatible.option,
  ...helpOption,
} as const;

const argsSchema = z.object({
  paths: z.array(z.string()).min(1, "name the folders (or .rego files) holding the policy and its tests"),
  verbose: z.boolean().default(false),
  run: z.string().optional(),
  coverage: z.boolean().default(false),
  format: z.enum(["text", "json"], { error: "--format is text or json" }).default("text"),
  "v0-compatible": z.boolean().default(false),
});

const RULE = "-".repeat(80);

function formatDuration(ms: number): string {
  return `${ms.toFixed(ms < 1 ? 2 : 1)}ms`;
}

function printResult(r: TestResult, verbose: boolean): void {
  const time = r.status === "SKIPPED" ? "" : ` (${formatDuration(r.durationMs)})`;
  console.log(`${r.test.name}: ${r.status}${time}`);
  if (verbose) console.log(`  at ${r.test.location.file}:${r.test.location.line}`);
  if (r.detail !== undefined) console.log(`  ${r.detail}`);
  if (verbose || r.status !== "PASS") for (const line of r.output) console.log(`  ${line}`);
}

/** The coverage summary: each file's share of lines covered, then the rules no test reached. */
function printCoverage(coverage: TestCoverage): void {
  const { report, uncoveredRules } = coverage;
  console.log(RULE);
  console.log(
    `coverage: ${report.coverage}% (${report.covered_lines} of ${report.covered_lines + report.not_covered_lines} lines)`,
  );
  for (const [file, c] of Object.entries(report.files)) {
    const missed = (c.not_covered ?? []).map((r) =>
      r.start.row === r.end.row ? `${r.start.row}` : `${r.start.row}-${r.end.row}`,
    );
    console.log(
      `  ${file}: ${c.coverage}%${missed.length > 0 ? `, not covered: lines ${missed.join(", ")}` : ""}`,
    );
  }
  if (uncoveredRules.length > 0) {
    console.log("rules no test reached:");
    for (const rule of uncoveredRules)
      console.log(`  ${rule.file}:${rule.line}: ${rule.default ? "default " : ""}${rule.rule}`);
  }
}

export async function testCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(command, testUsage, () =>
    parseArgs({ args: argv, options, allowPositionals: true, strict: true }),
  );
  if (typeof parsed === "number") return parsed;
  const checked = checkArgs(command, argsSchema, { ...parsed.values, paths: parsed.positionals });
  if (!checked.ok) return checked.exitCode;
  const args = checked.value;
  let filter: RegExp | undefined;
  if (args.run !== undefined) {
    try {
      filter = new RegExp(args.run);
    } catch (error) {
      return usageError(
        command,
        `--run ${JSON.stringify(args.run)} is not a regular expression (${String(error)})`,
      );
    }
  }

  try {
    const inputs = await loadPolicyInputs(args.paths, { bundles: false });
    const run = await runTests(inputs.sources, inputs.data, {
      filter,
      coverage: args.coverage,
      regoVersion: v0Compatible.regoVersion(args),
    });
    if (run.errors) return reportRegoErrors(command, run.errors, "no tests run");
    const results = run.results;
    const failed = results.filter((r) => r.status === "FAIL" || r.status === "ERROR").length;
    if (run.coverage && args.format === "json") {
      console.log(JSON.stringify(run.coverage.report, null, 2));
      return failed > 0 || results.length === 0 ? 1 : 0;
    }
    if (results.length === 0) {
      console.error(
        `${command}: no tests found in ${args.paths.join(", ")}${filter ? ` matching ${args.run}` : ""}: tests are rules named test_…`,
      );
      return 1;
    }
    if (args.verbose) {
      let file: string | undefined;
      for (const r of results) {
        if (r.test.location.file !== file) {
          if (file !== undefined) console.log("");
          file = r.test.location.file;
          console.log(`${file}:`);
        }
        printResult(r, true);
      }
    } else {
      for (const r of results) printResult(r, false);
    }
    console.log(RULE);
    const count = (status: TestStatus) => results.filter((r) => r.status === status).length;
    for (const status of ["PASS", "FAIL", "ERROR", "SKIPPED"] as const) {
      const n = count(status);
      if (n > 0 || status === "PASS") console.log(`${status}: ${n}/${results.length}`);
    }
    if (run.coverage) printCoverage(run.coverage);
    return failed > 0 ? 1 : 0;
  } catch (error) {
    return reportFailure(command, error);
  }
}
