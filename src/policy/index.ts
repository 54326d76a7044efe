export { environment, type OpaRuntime } from "../rego/opa-runtime.ts";
export { type CustomBuiltins, loadPolicyBuiltins } from "./builtins.ts";
export { validateDecision } from "./decision.ts";
export {
  DEFAULT_ENTRYPOINT,
  type EvaluatedDecision,
  type PolicyDecider,
  PolicyEngine,
  type PolicyEngineOptions,
} from "./engine.ts";
export { PolicyFailure, PolicyLoadError } from "./errors.ts";
export {
  type Decided,
  evaluateFailClosed,
  evaluateStoredFailClosed,
  type FailClosedEvaluation,
  failedClosed,
} from "./fail-closed.ts";
export {
  archivedEngine,
  archivedRevision,
  loadRevision,
  RevisionArchive,
  type RevisionDocument,
  revisionDocument,
  revisionSources,
} from "./revisions.ts";
export {
  type Disagreement,
  type LiveDecision,
  ShadowPolicy,
  type ShadowPolicyOptions,
  sameDecision,
} from "./shadow.ts";
export {
  bundleOrigin,
  type DirectorySources,
  type LoadedRevision,
  type PolicyFile,
  type RevisionSources,
} from "./sources.ts";
