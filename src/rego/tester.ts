/**
 * Policy tests, as `opa test` runs them: every rule named `test_…` in every package is a test;
 * all of them are compiled into one module (one entrypoint each) and evaluated with no input.
 * A test passes when it is defined and not false; `todo_test_…` rules are skipped.
 *
 * Like OPA, rules that share a test name are separate tests (`test_x`, `test_x#01`, …): they
 * are renamed apart before compiling, so one definition cannot hide another's failure.
 */
import { buildModules, parseModules, type RegoSource } from "./build.ts";
import type { DataObject } from "./bundle/index.ts";
import type { Location, RegoError } from "./errors.ts";
import { processRuntime } from "./opa-runtime.ts";
import { loadCompiledPolicy, PolicyEvaluationError } from "./policy.ts";
import type { Module, Rule } from "./syntax/ast.ts";
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
  /** `todo_test_…` rules: reported, never run. */
  skipped: boolean;
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
  /** Lines the test printed with `print`. */
  output: string[];
}

export type TestRun =
  | { errors: RegoError[]; results?: undefined; coverage?: undefined }
  | { errors?: undefined; results: TestResult[]; coverage?: TestCoverage };

/** What the tests evaluated (`coverage: true`): OPA's report and the rules no test reached. */
export interface TestCoverage {
  report: CoverageReport;
  uncoveredRules: RuleSite[];
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function refText(path: readonly string[]): string {
  return `data${path.map((s) => (IDENTIFIER.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`)).join("")}`;
}

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
    const rules = m.rules.map((rule) => {
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

/**
 * Compiles `sources` with every test (those whose name matches `filter`) as an entrypoint and
 * runs them. Output of `print` is captured per test rather than written to the console.
 */
export async function runTests(
  sources: readonly RegoSource[],
  data: DataObject,
  options: { filter?: RegExp; coverage?: boolean } = {},
): Promise<TestRun> {
  const parsed = parseModules(sources);
  if (parsed.errors.length > 0) return { errors: parsed.errors };
  const discovered = discoverTests(parsed.modules);
  const tests = discovered.tests.filter((t) => !options.filter || options.filter.test(t.name));
  const runnable = tests.filter((t) => !t.skipped);
  if (runnable.length === 0) return { results: tests.map((test) => skippedResult(test)) };

  const instrument = options.coverage ?? false;
  const built = buildModules(discovered.modules, {
    queries: runnable.map((t) => ({ name: t.name, query: t.query })),
    instrument,
  });
  if (!built.wasm) return { errors: built.errors };
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
  });

  const results: TestResult[] = [];
  for (const test of tests) {
    if (test.skipped) {
      results.push(skippedResult(test));
      continue;
    }
    const output: string[] = [];
    const log = console.log;
    console.log = (...args: unknown[]) => {
      output.push(printed(args));
    };
    const start = performance.now();
    let status: TestStatus;
    let detail: string | undefined;
    try {
      const resultSet = policy.evaluate(undefined, test.name);
      const first: unknown = resultSet[0];
      const value = typeof first === "object" && first !== null ? Reflect.get(first, "result") : undefined;
      if (resultSet.length === 0) [status, detail] = ["FAIL", "the test is undefined"];
      else if (value === false) [status, detail] = ["FAIL", "the test is false"];
      else status = "PASS";
    } catch (error) {
      status = "ERROR";
      detail = error instanceof PolicyEvaluationError ? error.detail : String(error);
    } finally {
      console.log = log;
    }
    results.push({ test, status, durationMs: performance.now() - start, detail, output });
  }
  if (!instrument) return { results };
  return {
    results,
    coverage: {
      report: coverageReport(built.sites, events.values()),
      uncoveredRules: uncoveredRules(built.sites, events.values()),
    },
  };
}

function skippedResult(test: TestCase): TestResult {
  return { test, status: "SKIPPED", durationMs: 0, detail: undefined, output: [] };
}
