/** `writ policy test`: run the `test_…` rules of a policy, as `opa test` does. */
import { parseArgs } from "node:util";
import { z } from "zod";
import {
  runTests,
  type TestCoverage,
  type TestResult,
  type TestStatus,
  type TestTimings,
} from "../../rego/tester.ts";
import { checkArgs, parseCommandArgs, usageError, v0Compatible } from "./args.ts";
import { loadBuiltinsOption } from "./builtins.ts";
import { discoveryWarning, policyCheckFlags } from "./discovery.ts";
import { loadPolicyInputs } from "./inputs.ts";
import { reportFailure, reportRegoErrors } from "./output.ts";

const command = "writ policy test";

/** `opa test`'s exit code when a test fails, errors or is skipped (v1/cmd/test.go). */
const TESTS_FAILED = 2;

export const testUsage = `usage: writ policy test <path>... [-v] [--run <regex>] [--format pretty|json] [--coverage] [--v0-compatible] [--config <file>]

Runs every rule named test_… in every package under the paths (folders are searched for .rego
files; data.json/data.yaml files are merged into data at their folder's path). A test passes
when it is defined and not false; it runs with no input, so set one with \`with input as …\`.
Rules named todo_test_… are reported as skipped. All tests are compiled into one module, then
run one after another.

Exit codes, as opa test: 0 when every test passed (or none was found), 2 when a test failed,
raised an error or was skipped (skipped ones do not count with -z), 1 when the policy does not
compile or a file cannot be read (or with --fail-on-empty, when no test was found), 2 for a
usage error.

options:
  -v, --verbose        group tests by file, say where each is defined, show the print()
                       output of every test under it (failing tests always show theirs), and
                       how long each stage took
      --run <regex>    run only the tests whose name (data.pkg.test_name) matches
      --format <f>     pretty (default; text is the same) or json: the results in the shape of
                       \`opa test --format json\` (an array of {location, package, name,
                       duration (ns), fail?, skip?, error?, output (base64)}); the run's
                       timings then go to stderr as one JSON line. With --coverage, json is
                       the coverage report only, in the shape of \`opa test --coverage\`
      --coverage       also report which rules and body lines the tests evaluated: a line
                       holding an expression is covered once it was evaluated, a rule's head
                       once the rule produced a value (the policy is built instrumented)
  -z, --exit-zero-on-skipped
                       skipped tests do not make the exit code 2
      --fail-on-empty  exit 1 when no test was found
${policyCheckFlags.usage}`;

const options = {
  verbose: { type: "boolean", short: "v" },
  run: { type: "string" },
  coverage: { type: "boolean" },
  format: { type: "string" },
  "exit-zero-on-skipped": { type: "boolean", short: "z" },
  "fail-on-empty": { type: "boolean" },
  ...policyCheckFlags.options,
} as const;

const argsSchema = z.object({
  paths: z.array(z.string()).min(1, "name the folders (or .rego files) holding the policy and its tests"),
  verbose: z.boolean().default(false),
  run: z.string().optional(),
  coverage: z.boolean().default(false),
  format: z
    .enum(["pretty", "text", "json"], { error: "--format is pretty or json" })
    .default("pretty")
    .transform((f) => (f === "text" ? "pretty" : f)),
  "exit-zero-on-skipped": z.boolean().default(false),
  "fail-on-empty": z.boolean().default(false),
  ...policyCheckFlags.schema,
});

const RULE = "-".repeat(80);

function formatDuration(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)}s`;
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

function timingsLine(t: TestTimings, tests: number): string {
  return `compile ${formatDuration(t.parseMs + t.compileMs + t.loadMs)} (parse ${formatDuration(t.parseMs)}, build ${formatDuration(t.compileMs)}, load ${formatDuration(t.loadMs)}), evaluation ${formatDuration(t.evalMs)} (${tests} test${tests === 1 ? "" : "s"})`;
}

/** The timings as JSON, in milliseconds (stderr with --format json). */
function timingsJson(t: TestTimings, tests: number): string {
  const ms = (n: number) => Math.round(n * 1000) / 1000;
  return JSON.stringify({
    timings: {
      parse_ms: ms(t.parseMs),
      compile_ms: ms(t.compileMs),
      load_ms: ms(t.loadMs),
      eval_ms: ms(t.evalMs),
      tests,
    },
  });
}

/** One result in the shape of OPA's `tester.Result` as `opa test --format json` prints it. */
function opaResult(r: TestResult): Record<string, unknown> {
  const name = r.test.name;
  const dot = name.lastIndexOf(".", name.indexOf("#") < 0 ? undefined : name.indexOf("#"));
  const output = r.output.length > 0 ? Buffer.from(`${r.output.join("\n")}\n`).toString("base64") : undefined;
  return {
    location: { file: r.test.location.file, row: r.test.location.line, col: r.test.location.col },
    package: name.slice(0, dot),
    name: name.slice(dot + 1),
    ...(output ? { output } : {}),
    duration: Math.round(r.durationMs * 1e6),
    ...(r.status === "FAIL" ? { fail: true } : {}),
    ...(r.status === "SKIPPED" ? { skip: true } : {}),
    ...(r.error ? { error: r.error } : {}),
  };
}

function printPretty(results: readonly TestResult[], verbose: boolean): void {
  if (verbose) {
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
    const builtins = await loadBuiltinsOption(args.builtins);
    const inputs = await loadPolicyInputs(args.paths, { bundles: false });
    const run = await runTests(inputs.sources, inputs.data, {
      ...(filter ? { filter } : {}),
      coverage: args.coverage,
      ...(builtins ? { builtins } : {}),
      regoVersion: v0Compatible.regoVersion(args),
    });
    if (run.errors) return reportRegoErrors(command, run.errors, "no tests run");
    const results = run.results;
    const notPassed = results.some(
      (r) =>
        r.status === "FAIL" ||
        r.status === "ERROR" ||
        (r.status === "SKIPPED" && !args["exit-zero-on-skipped"]),
    );
    const code = notPassed ? TESTS_FAILED : 0;
    const ran = results.filter((r) => r.status !== "SKIPPED").length;

    if (results.length === 0 && args["fail-on-empty"]) {
      console.error(
        `${command}: no tests found in ${args.paths.join(", ")}${filter ? ` matching ${args.run}` : ""}: tests are rules named test_…`,
      );
      return 1;
    }
    if (args.format === "json") {
      if (run.coverage) console.log(JSON.stringify(run.coverage.report, null, 2));
      else console.log(JSON.stringify(results.map(opaResult), null, 2));
      console.error(timingsJson(run.timings, ran));
      return code;
    }
    if (results.length === 0) {
      console.log(`no tests found${filter ? ` matching ${args.run}` : ""}: tests are rules named test_…`);
      return 0;
    }
    printPretty(results, args.verbose);
    console.log(timingsLine(run.timings, ran));
    if (run.coverage) printCoverage(run.coverage);
    const warning = await discoveryWarning(args.paths, args.config);
    if (warning !== undefined) console.error(`${command}: ${warning}`);
    return code;
  } catch (error) {
    return reportFailure(command, error);
  }
}
