export { validateDecision } from "./decision.ts";
export {
  DEFAULT_ENTRYPOINT,
  type EvaluatedDecision,
  PolicyEngine,
  type PolicyEngineOptions,
} from "./engine.ts";
export { PolicyFailure, PolicyLoadError } from "./errors.ts";
