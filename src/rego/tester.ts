/**
 * Policy tests, as `opa test` runs them: every rule named `test_…` in every package is a test;
 * all of them are compiled into one module (one entrypoint each) and evaluated with no input.
 * A test passes when it is defined and not false; `todo_test_…` rules are skipped.
 *
 * Like OPA, rules that share a test name are separate tests (`test_x`, `test_x#01`, …): they
 * are renamed apart before compiling, so one definition cannot hide another's failure.
 */
import { buildModules, parseModules, type RegoSource } from "./build.ts";
import type { CustomBuiltins } from "./builtins/index.ts";
import type { DataObject } from "./bundle/index.ts";
import type { Location, RegoError } from "./errors.ts";
import { processRuntime } from "./opa-runtime.ts";
import { loadCompiledPolicy, type Policy, PolicyEvaluationError } from "./policy.ts";
import type { Module, Rule } from "./syntax/ast.ts";
import type { RegoVersion } from "./syntax/index.ts";
import {
  type CoverageReport,
  coverageReport,
  type RuleSite,
  type TraceEvent,
  uncoveredRules,
} from "./trace.ts";

export interface TestCase {
  /** `data.pkg.test_name`; later definitions of the same name get `#01`, `#02`, … */
  name: string;
  location: Location;
  /** `todo_test_…` rules (and tests Writ cannot run yet, see `unsupported`): reported, never run. */
  skipped: boolean;
  /** Why a test is skipped although it is not a `todo_test_…` rule. */
  unsupported?: string;
  /** The query that evaluates the test (`result = data.pkg.test_name`). */
  query: string;
}

export type TestStatus = "PASS" | "FAIL" | "ERROR" | "SKIPPED";

export interface TestResult {
  test: TestCase;
  status: TestStatus;
  durationMs: number;
  /** Why a test failed (`undefined`, `false`) or the error it raised. */
  detail: string | undefined;
  /** The error of an `ERROR` test, as OPA reports it (`eval_conflict_error`, …). */
  error?: TestError;
  /** Lines the test printed with `print`. */
  output: string[];
}

export interface TestError {
  code: string;
  message: string;
  location?: { file: string; row: number; col: number };
}

/** Where a run's time went, in milliseconds: reading the sources, compiling them, running tests. */
export interface TestTimings {
  parseMs: number;
  /** Compiling every test into one module (compile, plan, Wasm). */
  compileMs: number;
  /** Loading the module into the SDK with its data. */
  loadMs: number;
  /** Evaluating the tests, all together. */
  evalMs: number;
}

export type TestRun =
  | { errors: RegoError[]; results?: undefined; coverage?: undefined; timings: TestTimings }
  | { errors?: undefined; results: TestResult[]; coverage?: TestCoverage; timings: TestTimings };

/** What the tests evaluated (`coverage: true`): OPA's report and the rules no test reached. */
export interface TestCoverage {
  report: CoverageReport;
  uncoveredRules: RuleSite[];
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function refText(path: readonly string[]): string {
  return `data${path.map((s) => (IDENTIFIER.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`)).join("")}`;
}

/**
 * The name of a parametrized test (`test_cases[name] if { some name, tc in {…} … }`), a rule whose
 * head is a ref under a `test_…` name. OPA runs it as one test with a sub-result per case (its
 * compiler injects a call recording each case that starts); Writ does not yet, and says so
 * rather than leave it out.
 */
function parametrizedTestName(rule: Rule): string | undefined {
  const { ref } = rule.head;
  if (rule.head.args !== undefined || ref.type !== "ref" || ref.head.type !== "var") return undefined;
  const name = ref.head.name;
  return name.startsWith("test_") || name.startsWith("todo_test_") ? name : undefined;
}

const PARAMETRIZED =
  "a parametrized test (test_x[case]) is not run by writ policy test yet: write one test_ rule per case";

function ruleName(rule: Rule): string | undefined {
  const { head } = rule;
  if (head.args !== undefined || head.key !== undefined || head.ref.type !== "var") return undefined;
  return head.ref.name;
}

function renamed(rule: Rule, name: string): Rule {
  const ref = rule.head.ref.type === "var" ? { ...rule.head.ref, name } : rule.head.ref;
  return {
    ...rule,
    head: { ...rule.head, ref },
    else: rule.else ? renamed(rule.else, name) : undefined,
  };
}

/**
 * The tests of `modules`, and the modules with tests that share a name renamed apart (the
 * second `test_x` of a package becomes a fresh rule name, reported as `test_x#01`).
 */
export function discoverTests(modules: readonly Module[]): { modules: Module[]; tests: TestCase[] } {
  const namesByPackage = new Map<string, Set<string>>();
  for (const m of modules) {
    const key = m.package.path.join("\0");
    const names = namesByPackage.get(key) ?? new Set<string>();
    for (const r of m.rules) {
      const n = ruleName(r);
      if (n !== undefined) names.add(n);
    }
    namesByPackage.set(key, names);
  }
  const seen = new Map<string, number>();
  const tests: TestCase[] = [];
  const out = modules.map((m) => {
    const pkgKey = m.package.path.join("\0");
    const names = namesByPackage.get(pkgKey) ?? new Set<string>();
    const reported = new Set<string>();
    const rules = m.rules.map((rule) => {
      const parametrized = rule.default ? undefined : parametrizedTestName(rule);
      if (parametrized !== undefined && !reported.has(parametrized)) {
        reported.add(parametrized);
        tests.push({
          name: `${refText(m.package.path)}.${parametrized}`,
          location: rule.loc,
          skipped: true,
          unsupported: PARAMETRIZED,
          query: `result = ${refText([...m.package.path, parametrized])}`,
        });
      }
      const name = ruleName(rule);
      if (rule.default || name === undefined) return rule;
      const skipped = name.startsWith("todo_test_");
      if (!skipped && !name.startsWith("test_")) return rule;
      const key = `${pkgKey}\0${name}`;
      const index = seen.get(key) ?? 0;
      seen.set(key, index + 1);
      let internal = name;
      if (index > 0) {
        let n = index;
        do internal = `${name}__${n++}`;
        while (names.has(internal));
        names.add(internal);
      }
      const suffix = index > 0 ? `#${String(index).padStart(2, "0")}` : "";
      tests.push({
        name: `${refText(m.package.path)}.${name}${suffix}`,
        location: rule.loc,
        skipped,
        query: `result = ${refText([...m.package.path, internal])}`,
      });
      return internal === name ? rule : renamed(rule, internal);
    });
    return { ...m, rules };
  });
  return { modules: out, tests };
}

function printed(args: unknown[]): string {
  return args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ");
}

/** An evaluation error's text (`file:row:col: message` or `code: message`) as OPA's error object. */
export function testError(detail: string): TestError {
  const m = /^(?:(.+?):(\d+):(\d+): )?(?:((?:eval|rego)_[a-z_]+): )?([\s\S]*)$/.exec(detail);
  const [, file, row, col, code, message] = m ?? [];
  const text = message ?? detail;
  return {
    code: code ?? (/\bconflict\b/.test(text) ? "eval_conflict_error" : "eval_internal_error"),
    message: text,
    ...(file !== undefined && row !== undefined && col !== undefined
      ? { location: { file, row: Number(row), col: Number(col) } }
      : {}),
  };
}

export interface TestOptions {
  /** Run only the tests whose name (`data.pkg.test_x`) matches. */
  filter?: RegExp;
  /** Build instrumented and report coverage. */
  coverage?: boolean;
  /** Custom builtins the policies call. */
  builtins?: CustomBuiltins;
  /** Rego v0 sources (`--v0-compatible`): how sources without their own version are parsed. */
  regoVersion?: RegoVersion;
  /**
   * Run binaryen's optimizer on the tests' module (default false: tests run once, and the
   * optimizer takes about two thirds of the build; `opa test` does not optimize either).
   */
  optimize?: boolean;
}

/**
 * Compiles `sources` with every test (those whose name matches `filter`) as an entrypoint and
 * runs them. Output of `print` is captured per test rather than written to the console.
 */
export async function runTests(
  sources: readonly RegoSource[],
  data: DataObject,
  options: TestOptions = {},
): Promise<TestRun> {
  const timings: TestTimings = { parseMs: 0, compileMs: 0, loadMs: 0, evalMs: 0 };
  let mark = performance.now();
  const lap = (): number => {
    const now = performance.now();
    const ms = now - mark;
    mark = now;
    return ms;
  };
  const parsed = parseModules(sources, options);
  const discovered = discoverTests(parsed.modules);
  timings.parseMs = lap();
  if (parsed.errors.length > 0) return { errors: parsed.errors, timings };
  const tests = discovered.tests.filter((t) => !options.filter || options.filter.test(t.name));
  const runnable = tests.filter((t) => !t.skipped);
  if (runnable.length === 0) return { results: tests.map((test) => skippedResult(test)), timings };

  const instrument = options.coverage ?? false;
  const built = buildModules(discovered.modules, {
    queries: runnable.map((t) => ({ name: t.name, query: t.query })),
    instrument,
    ...(options.builtins ? { builtins: options.builtins } : {}),
    optimize: options.optimize ?? false,
  });
  timings.compileMs = lap();
  if (!built.wasm) return { errors: built.errors, timings };
  // Coverage needs each (kind, site) once, not every evaluation's bindings.
  const events = new Map<string, TraceEvent>();
  const record = (event: TraceEvent) => {
    const key = `${event.kind}:${event.site}`;
    if (!events.has(key)) events.set(key, { kind: event.kind, site: event.site });
  };
  const policy = await loadCompiledPolicy({
    wasm: built.wasm,
    hostBuiltins: built.hostBuiltins,
    data,
    // opa.runtime() shows the whole environment, as in `opa test`.
    runtime: processRuntime(),
    ...(instrument ? { trace: record } : {}),
    ...(options.builtins ? { builtins: options.builtins } : {}),
  });
  timings.loadMs = lap();

  const results: TestResult[] = [];
  for (const test of tests) {
    if (test.skipped) {
      results.push(skippedResult(test));
      continue;
    }
    results.push(runTest(policy, test));
  }
  timings.evalMs = lap();
  if (!instrument) return { results, timings };
  return {
    results,
    timings,
    coverage: {
      report: coverageReport(built.sites, events.values()),
      uncoveredRules: uncoveredRules(built.sites, events.values()),
    },
  };
}

/** Evaluates one test, capturing what it prints. */
function runTest(policy: Policy, test: TestCase): TestResult {
  const output: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => {
    output.push(printed(args));
  };
  const start = performance.now();
  let status: TestStatus;
  let detail: string | undefined;
  let error: TestError | undefined;
  try {
    const resultSet = policy.evaluate(undefined, test.name);
    const first: unknown = resultSet[0];
    const value = typeof first === "object" && first !== null ? Reflect.get(first, "result") : undefined;
    if (resultSet.length === 0) [status, detail] = ["FAIL", "the test is undefined"];
    else if (value === false) [status, detail] = ["FAIL", "the test is false"];
    else status = "PASS";
  } catch (e) {
    status = "ERROR";
    detail = e instanceof PolicyEvaluationError ? e.detail : String(e);
    error = testError(detail);
  } finally {
    console.log = log;
  }
  return {
    test,
    status,
    durationMs: performance.now() - start,
    detail,
    output,
    ...(error ? { error } : {}),
  };
}

function skippedResult(test: TestCase): TestResult {
  return { test, status: "SKIPPED", durationMs: 0, detail: test.unsupported, output: [] };
}
