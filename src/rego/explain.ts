/**
 * Explaining one evaluation (issues 19, 31): the policy is built instrumented (`trace.ts`) once
 * (`prepareExplainer`; callers keep the explainer per revision, since the build is what takes
 * time), then each input is evaluated with its trace read as a tree (`explain-tree.ts`): the
 * answer, the rules and expressions that produced it with the values they saw, the rules tried
 * that did not hold, and the rest. Values of rules are read from entrypoints the same build
 * carries for every rule that is not a function.
 */
import type { BuildOptions, RegoSource } from "./build.ts";
import type { DataObject } from "./bundle/index.ts";
import { RegoErrors } from "./errors.ts";
import { type ExplainTree, explainTree, rulePath } from "./explain-tree.ts";
import { loadCompiledPolicy } from "./policy.ts";
import { parseModules } from "./sources.ts";
import type { Module } from "./syntax/ast.ts";
import type { TraceEvent } from "./trace.ts";

export interface ExplainOptions {
  entrypoint: string;
  data?: DataObject;
  strictBuiltinErrors?: BuildOptions["strictBuiltinErrors"];
}

/** A traced evaluation: its result set and the tree that explains it. */
export interface Explanation {
  result: unknown[];
  tree: ExplainTree;
}

/** An instrumented build of one policy, loaded once, explaining any number of inputs. */
export interface Explainer {
  explain(input: unknown): Explanation;
}

const RULE_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\/[A-Za-z_][A-Za-z0-9_]*)*$/;

/** Builds `sources` instrumented for `options.entrypoint`; throws RegoErrors if they do not build. */
export async function prepareExplainer(
  sources: readonly RegoSource[],
  options: ExplainOptions,
): Promise<Explainer> {
  // The compiler (and binaryen) is loaded when something is explained, not when Writ starts.
  const { buildModules } = await import("./build.ts");
  const { modules, errors } = parseModules(sources);
  if (errors.length > 0) throw new RegoErrors(errors);
  const rules = [...rulePaths(modules)].filter((p) => p !== options.entrypoint && RULE_PATH.test(p));
  const built = buildModules(modules, {
    entrypoints: [options.entrypoint, ...rules],
    instrument: true,
    optimize: false,
    ...(options.strictBuiltinErrors === undefined
      ? {}
      : { strictBuiltinErrors: options.strictBuiltinErrors }),
  });
  if (!built.wasm) throw new RegoErrors(built.errors);
  // One module instance; the sink is swapped per evaluation (evaluations are synchronous).
  let sink: TraceEvent[] = [];
  const policy = await loadCompiledPolicy({
    wasm: built.wasm,
    hostBuiltins: built.hostBuiltins,
    data: options.data ?? {},
    trace: (event) => sink.push(event),
  });
  const sites = built.sites;
  const texts = new Map(sources.map((s) => [s.file, s.source]));
  const readable = new Set(rules);
  return {
    explain(input: unknown): Explanation {
      const events: TraceEvent[] = [];
      sink = events;
      const result = policy.evaluate(input, options.entrypoint);
      const values = new Map<string, unknown>();
      const ruleValue = (path: string): unknown => {
        if (!values.has(path)) {
          sink = [];
          let value: unknown;
          try {
            const set = policy.evaluate(input, path);
            const first = set[0];
            value = typeof first === "object" && first !== null ? Reflect.get(first, "result") : undefined;
          } catch {
            // A rule that fails on its own (a conflict) shows no value.
            value = undefined;
          }
          values.set(path, value);
        }
        return values.get(path);
      };
      const tree = explainTree(events, {
        sites,
        modules,
        sources: texts,
        entrypoint: options.entrypoint,
        input,
        data: options.data ?? {},
        rules: readable,
        ruleValue,
      });
      return { result, tree };
    },
  };
}

/** Evaluates `input` against an instrumented build of `sources`; throws RegoErrors if they do not build. */
export async function explainEvaluation(
  sources: readonly RegoSource[],
  input: unknown,
  options: ExplainOptions,
): Promise<Explanation> {
  return (await prepareExplainer(sources, options)).explain(input);
}

/** The data paths of the rules that are not functions (`writ/args`), each once. */
function rulePaths(modules: readonly Module[]): Set<string> {
  const paths = new Set<string>();
  for (const m of modules)
    for (const r of m.rules) if (r.head.args === undefined) paths.add(rulePath(m, r).path);
  return paths;
}
