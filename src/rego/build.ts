/**
 * Rego source to an OPA-ABI WebAssembly module: parse → compile → plan → wasm.
 *
 * Entrypoints are rule paths (`writ/decision`): each becomes the query `result = data.writ.decision`,
 * so the SDK answers `[{"result": …}]`. Queries (`data.test.p = x`) can be entrypoints too: their
 * result set holds the bindings of their variables.
 */
import { type BuiltinDeclaration, type CustomBuiltins, withCustomBuiltins } from "./builtins/index.ts";
import { compile, type QuerySource } from "./compile/index.ts";
import { RegoError } from "./errors.ts";
import { importedBuiltin } from "./host/index.ts";
import type { IRPlan } from "./plan/ir.ts";
import { plan } from "./plan/planner.ts";
import { parseModules, type RegoSource } from "./sources.ts";
import type { Body, Module } from "./syntax/ast.ts";
import { parseQuery, type RegoVersion } from "./syntax/index.ts";
import type { TraceSite } from "./trace.ts";
import { CodeGenerator } from "./wasm/codegen.ts";
import { Linker } from "./wasm/link.ts";

export type { RegoSource } from "./sources.ts";
export { parseModules } from "./sources.ts";

export interface BuildOptions {
  /** Rule paths (`writ/decision`) evaluated as `result = data.writ.decision`. */
  entrypoints?: readonly string[];
  /** Named queries (`{name: "q", query: "data.test.p = x"}`), evaluated with their bindings. */
  queries?: ReadonlyArray<{ name: string; query: string }>;
  /**
   * The Rego version of the sources that do not name their own and of the queries (default 1;
   * 0 is OPA's `--v0-compatible`). Both versions compile to the same thing: a v0 module parses
   * to the AST of its v1 spelling.
   */
  regoVersion?: RegoVersion;
  /** Run binaryen's optimizer on the module (default true). */
  optimize?: boolean;
  /**
   * Strict builtin errors (OPA's `--strict-builtin-errors`): a builtin that raises an error
   * (`count(null)`, a malformed JWT) aborts the evaluation with OPA's code and message instead
   * of being undefined. Default false, as in OPA.
   */
  strictBuiltinErrors?: boolean;
  /**
   * A metered module (`wasm/meter.ts`): its loops spend fuel, and when it runs out the module
   * calls the host builtin `writ.$budget`, which a host may use to stop the evaluation at a
   * deadline (Writ's loader does: `Policy.evaluate`'s `budgetMs`). Default false: the module then
   * needs no host of Writ's (a stock OPA SDK loads it) and runs every evaluation to its end.
   * The gateway's policies and `writ policy build`'s bundles are metered.
   */
  budget?: boolean;
  /**
   * An instrumented build (`trace.ts`): the module reports rules and expressions as they are
   * evaluated, for explanations and coverage. It loads only with a trace sink, so it never serves.
   */
  instrument?: boolean;
  /**
   * Custom builtins (`builtins/custom.ts`): calls to them are type-checked against their
   * declarations and compiled to host calls.
   */
  builtins?: CustomBuiltins;
  /**
   * Builtins the host refuses to run (OPA's unsafe builtins), each with what to do instead: a
   * call that `with` does not replace is a compile error at the call. The gateway refuses
   * `opa.runtime` this way when `policy.opa_runtime.enabled` is false.
   */
  refusedBuiltins?: ReadonlyMap<string, string>;
}

export interface BuildResult {
  wasm: Uint8Array | undefined;
  /** The plan, for inspection and for the IR interpreter. */
  plan: IRPlan | undefined;
  /** Entrypoint names in `entrypoints()` order. */
  entrypoints: string[];
  /** Host builtins the module calls, by name. */
  hostBuiltins: string[];
  /** The declarations of the custom builtins the module calls (a bundle records them). */
  customBuiltins: BuiltinDeclaration[];
  /** An instrumented build's trace points, by the id its events carry (empty otherwise). */
  sites: TraceSite[];
  errors: RegoError[];
}

const ENTRYPOINT_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*(\/[A-Za-z_][A-Za-z0-9_]*)*$/;

function entrypointQuery(entrypoint: string): Body | RegoError {
  if (!ENTRYPOINT_PATTERN.test(entrypoint)) {
    return new RegoError(
      "rego_compile_error",
      `invalid entrypoint ${JSON.stringify(entrypoint)}: use a rule path such as writ/decision`,
    );
  }
  const parsed = parseQuery(`result = data.${entrypoint.split("/").join(".")}`, `entrypoint ${entrypoint}`);
  return parsed.body ?? parsed.errors[0]!;
}

export function buildPolicy(sources: readonly RegoSource[], options: BuildOptions): BuildResult {
  const { modules, errors } = parseModules(sources, options);
  return buildModules(modules, options, errors);
}

/** A build that produced nothing but its errors. */
function failedBuild(errors: RegoError[]): BuildResult {
  return {
    wasm: undefined,
    plan: undefined,
    entrypoints: [],
    hostBuiltins: [],
    customBuiltins: [],
    sites: [],
    errors,
  };
}

/**
 * `buildPolicy` from modules already parsed (and possibly rewritten, as the test runner renames
 * tests that share a name). `parseErrors` are reported with the build's own errors.
 */
export function buildModules(
  modules: readonly Module[],
  options: BuildOptions,
  parseErrors: readonly RegoError[] = [],
): BuildResult {
  const errors = [...parseErrors];
  const queries: QuerySource[] = [];
  const names: string[] = [];
  for (const e of options.entrypoints ?? []) {
    const body = entrypointQuery(e);
    if (body instanceof RegoError) errors.push(body);
    else queries.push({ name: e, body });
    names.push(e);
  }
  for (const q of options.queries ?? []) {
    const parsed = parseQuery(q.query, "query.rego", { regoVersion: options.regoVersion });
    errors.push(...parsed.errors);
    if (parsed.body) queries.push({ name: q.name, body: parsed.body });
    names.push(q.name);
  }
  if (names.length === 0)
    errors.push(
      new RegoError(
        "rego_compile_error",
        "no entrypoints: name at least one rule path, e.g. -e writ/decision",
      ),
    );
  if (errors.length > 0) return failedBuild(errors);

  return withCustomBuiltins(options.builtins, () => {
    try {
      return compileAndLink(modules, queries, names, options);
    } catch (error) {
      // A bug of the compiler, not of the policy: report it as an error rather than a crash.
      const detail = error instanceof Error ? error.message : String(error);
      return failedBuild([new RegoError("rego_compile_error", `internal compiler error: ${detail}`)]);
    }
  });
}

function compileAndLink(
  modules: readonly Module[],
  queries: QuerySource[],
  names: string[],
  options: BuildOptions,
): BuildResult {
  const compiled = compile(modules, queries);
  if (!compiled.policy) return failedBuild(compiled.errors);

  const planned = plan(
    compiled.policy,
    names.map((n) => ({ name: n, query: n })),
    { instrument: options.instrument ?? false, refusedBuiltins: options.refusedBuiltins ?? new Map() },
  );
  if (planned.errors.length > 0) return failedBuild(planned.errors);

  const linker = new Linker();
  const generator = new CodeGenerator(linker, {
    nativeBuiltin: (name) => linker.nativeBuiltin(name),
    strictBuiltinErrors: options.strictBuiltinErrors ?? false,
    budget: options.budget ?? false,
  });
  try {
    generator.generate(planned.plan);
  } catch (error) {
    linker.dispose();
    throw error;
  }
  if (generator.errors.length > 0) {
    linker.dispose();
    return failedBuild(generator.errors);
  }
  const wasm = linker.emit({ optimize: options.optimize ?? true });
  const hostBuiltins = generator.hostBuiltinNames();
  const custom = options.builtins;
  const customBuiltins = custom
    ? [...new Set(hostBuiltins.map(importedBuiltin))].flatMap((name) => {
        const b = custom.get(name);
        return b ? [b.declaration] : [];
      })
    : [];
  return {
    wasm,
    plan: planned.plan,
    entrypoints: names,
    hostBuiltins,
    customBuiltins,
    sites: planned.sites,
    errors: [],
  };
}
