/**
 * Writ's Rego toolchain: compile Rego v1 to OPA-ABI WebAssembly, write and read bundles, and
 * load compiled policies into the `@open-policy-agent/opa-wasm` SDK.
 */
export { type BuildOptions, type BuildResult, buildPolicy, type RegoSource } from "./build.ts";
export { allBuiltins as builtinCatalog, type BuiltinSpec } from "./builtins/catalog.ts";
export * from "./bundle/index.ts";
export { RegoError, RegoErrors } from "./errors.ts";
export {
  type Explainer,
  type ExplainOptions,
  type Explanation,
  explainEvaluation,
  prepareExplainer,
} from "./explain.ts";
export type { ExplainNode, ExplainStep, ExplainTree } from "./explain-tree.ts";
export {
  type BundlePolicy,
  type CompiledPolicyInput,
  loadCompiledPolicy,
  loadPolicyFromBundle,
  type Policy,
  PolicyEvaluationError,
  PolicyLoadError,
} from "./policy.ts";
export type {
  CoverageReport,
  FileCoverage,
  LineRange,
} from "./trace.ts";
