export { validateDecision } from "./decision.ts";
export {
  DEFAULT_ENTRYPOINT,
  type EvaluatedDecision,
  PolicyEngine,
  type PolicyEngineOptions,
} from "./engine.ts";
export { PolicyFailure, PolicyLoadError } from "./errors.ts";
export {
  type Disagreement,
  type LiveDecision,
  ShadowPolicy,
  type ShadowPolicyOptions,
  sameDecision,
} from "./shadow.ts";
