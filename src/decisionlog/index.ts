/** The tamper-evident decision log (DESIGN section 8). */

export { callerRequestIdOf, noteCallerRequestId } from "./caller-request-ids.ts";
export {
  Checkpointer,
  type CheckpointerOptions,
  type CheckpointsConfig,
  checkpointPayloadSchema,
  checkpointsConfigSchema,
  startCheckpointer,
  verifyCheckpoint,
} from "./checkpoint.ts";
export { type CheckpointJwks, CheckpointKeys, checkpointKeyFile } from "./checkpoint-keys.ts";
export {
  type CheckpointProblem,
  type CheckpointReport,
  type CheckpointSource,
  checkCheckpoints,
  storeCheckpoints,
} from "./checkpoint-verify.ts";
export {
  readWitness,
  type Witness,
  type WitnessConfig,
  witnessConfigSchema,
  witnessOf,
} from "./checkpoint-witness.ts";
export { detectSecrets, isSensitiveKey, MASK } from "./detectors.ts";
export {
  type EvaluatedFacts,
  type EvaluationFacts,
  EXECUTE_PATH,
  type ExecutedGrant,
  type ExecutionFacts,
  evaluationEntry,
  executionEntry,
  HTTP_PATH,
  type HttpRefusalFacts,
  httpRefusalEntry,
  type RefusalFacts,
  refusalEntry,
  SHADOW_PATH,
  type ShadowFacts,
  shadowEntry,
  shadowedDecisionId,
} from "./entry.ts";
export { hashEntry } from "./hash.ts";
export {
  type BreakReason,
  DecisionLog,
  type DecisionLogOptions,
  type DecisionParts,
  type LoggedDecision,
  type VerifyResult,
} from "./log.ts";
export {
  ChainMonitor,
  type ChainMonitorOptions,
  type ChainStatus,
  DEFAULT_FULL_CHECK_MS,
} from "./monitor.ts";
export { type Redacted, type RedactionRules, redact, redactionRulesSchema } from "./redact.ts";
export {
  noteAppend,
  RefusalAggregator,
  type RefusalAggregatorOptions,
  type RefusalLog,
  refusalReason,
  trackRefusals,
} from "./refusals.ts";
