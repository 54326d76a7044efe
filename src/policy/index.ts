export {
  DEFAULT_ENTRYPOINT,
  type EvaluatedDecision,
  PolicyEngine,
  type PolicyEngineOptions,
  PolicyFailure,
  PolicyLoadError,
  validateDecision,
} from "./engine.ts";
