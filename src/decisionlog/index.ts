/** The tamper-evident decision log (DESIGN section 8). */

export {
  Checkpointer,
  type CheckpointerOptions,
  type CheckpointPublisher,
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
export type {
  ApprovalCollectedFacts,
  ApprovalRefusalFacts,
  ApprovalTransitionFacts,
} from "./entries/approvals.ts";
export type { ConsoleFacts } from "./entries/console.ts";
export type { ExecutedGrant, ExecutionFacts } from "./entries/execute.ts";
export type {
  HttpRefusalFacts,
  ResourceWriteFacts,
  TenancyFacts,
} from "./entries/http.ts";
export type { EvaluatedFacts, EvaluationFacts, RefusalFacts, ShadowFacts } from "./entries/policy.ts";
export { hashEntry } from "./hash.ts";
export {
  approvalCollectedEntry,
  approvalRefusalEntry,
  approvalTransitionEntry,
  consoleEntry,
  ENTRY_KINDS,
  type EntryKind,
  type EntryKindName,
  evaluationEntry,
  executionEntry,
  httpRefusalEntry,
  refusalEntry,
  resourceWriteEntry,
  shadowEntry,
  shadowedDecisionId,
  tenancyEntry,
} from "./kinds.ts";
export {
  type AuditLog,
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
  RefusalAggregator,
  type RefusalAggregatorOptions,
  type RefusalLog,
  type RefusalRecorder,
  refusalReason,
} from "./refusals.ts";
export { type OpenRequest, OpenRequests } from "./requests.ts";
