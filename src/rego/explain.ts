/**
 * Explaining one evaluation (issue 19): the policy is built instrumented (`trace.ts`), the input
 * evaluated once more, and the trace read back as the rules that produced values and the body
 * expressions that held on the way, with their variables' values and source lines.
 */
import type { BuildOptions, RegoSource } from "./build.ts";
import type { DataObject } from "./bundle/index.ts";
import { RegoErrors } from "./errors.ts";
import { loadCompiledPolicy } from "./policy.ts";
import { type Explanation, explainTrace, explainWithSources, type TraceEvent } from "./trace.ts";

export interface ExplainOptions {
  entrypoint: string;
  data?: DataObject;
  strictBuiltinErrors?: BuildOptions["strictBuiltinErrors"];
}

/** Evaluates `input` against an instrumented build of `sources`; throws RegoErrors if they do not build. */
export async function explainEvaluation(
  sources: readonly RegoSource[],
  input: unknown,
  options: ExplainOptions,
): Promise<Explanation> {
  // The compiler (and binaryen) is loaded when something is explained, not when Writ starts.
  const { buildPolicy } = await import("./build.ts");
  const built = buildPolicy(sources, {
    entrypoints: [options.entrypoint],
    instrument: true,
    optimize: false,
    ...(options.strictBuiltinErrors === undefined
      ? {}
      : { strictBuiltinErrors: options.strictBuiltinErrors }),
  });
  if (!built.wasm) throw new RegoErrors(built.errors);
  const events: TraceEvent[] = [];
  const policy = await loadCompiledPolicy({
    wasm: built.wasm,
    hostBuiltins: built.hostBuiltins,
    data: options.data ?? {},
    trace: (event) => events.push(event),
  });
  const result = policy.evaluate(input, options.entrypoint);
  return explainWithSources(explainTrace(built.sites, events), sources, result);
}
