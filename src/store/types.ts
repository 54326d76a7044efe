/**
 * The `Store` (DESIGN section 9): everything Writ keeps, as the intersection of one capability
 * interface per concern, each declared beside its SQL. SQLite is the embedded default;
 * PostgreSQL implements the same interfaces for several instances. Methods are async so that
 * both fit; every method that changes state is atomic. A consumer takes the narrowest capability
 * it uses (`ResourceStore`, `DecisionStore & CheckpointStore`, …), `Store` only where it hands
 * the whole store on.
 */
import type { KeySetStorage } from "../grants/key-storage.ts";
import type { ApprovalStore } from "./approvals.ts";
import type { CancellationStore } from "./cancellations.ts";
import type { CheckpointStore } from "./checkpoints.ts";
import type { ConsoleSessionStore } from "./console-sessions.ts";
import type { DecisionStore } from "./decisions.ts";
import type { GrantUseStore } from "./grant-uses.ts";
import type { GroupLeaseStore } from "./group-leases.ts";
import type { HistoryStore } from "./history.ts";
import type { IdempotencyStore } from "./idempotency.ts";
import type { LimitStore } from "./limit-usage.ts";
import type { LogShippingStore } from "./log-shipping.ts";
import type { McpSessionStore } from "./mcp-sessions.ts";
import type { McpTaskStore } from "./mcp-tasks.ts";
import type { PolicyRevisionStore } from "./policy-revisions.ts";
import type { ResourceStore } from "./resources.ts";

export type * from "./approval-records.ts";
export { approvalStatuses } from "./approval-records.ts";
export type { ApprovalStore } from "./approvals.ts";
export type { CancellationStore } from "./cancellations.ts";
export type { CheckpointStore, StoredCheckpoint } from "./checkpoints.ts";
export type {
  ConsoleSession,
  ConsoleSessionStore,
  ConsoleSessionUse,
  NewConsoleSession,
} from "./console-sessions.ts";
export type * from "./decision-entry.ts";
export type { DecisionStore } from "./decisions.ts";
export type { GrantConsumption, GrantUse, GrantUseStore } from "./grant-uses.ts";
export type { GroupLeaseStore } from "./group-leases.ts";
export type { HistoryBucket, HistoryCount, HistoryQuery, HistoryStore } from "./history.ts";
export type { IdempotencyClaim, IdempotencyStore } from "./idempotency.ts";
export type { LimitBucket, LimitCharge, LimitConsumption, LimitStore } from "./limit-usage.ts";
export type { LogShippingClaim, LogShippingState, LogShippingStore } from "./log-shipping.ts";
export type { McpSessionEvent, McpSessionRecord, McpSessionStore } from "./mcp-sessions.ts";
export type {
  McpTaskCall,
  McpTaskChange,
  McpTaskCondition,
  McpTaskRecord,
  McpTaskStatus,
  McpTaskStore,
  NewMcpTask,
} from "./mcp-tasks.ts";
export { mcpTaskStatuses, TERMINAL_TASK_STATUSES } from "./mcp-tasks.ts";
export type {
  NewPolicyRevision,
  PolicyRevisionInfo,
  PolicyRevisionPage,
  PolicyRevisionRecord,
  PolicyRevisionStore,
  PolicySourceKind,
} from "./policy-revisions.ts";
export { policySourceKinds } from "./policy-revisions.ts";
export type { ResourceStore, ResourceWrite, ScopedResourceWrite, StoredResource } from "./resources.ts";
export { ALL_TENANTS, type TenantScope } from "./tenancy.ts";

/** Opening and closing: what every backend adds to its capabilities. */
export interface StoreLifecycle {
  /** Creates the schema (idempotent, versioned migrations). */
  migrate(): Promise<void>;
  close(): Promise<void>;
  /**
   * Present when the store also holds the grant signing key set, shared by every instance on it
   * (PostgreSQL); absent when the keys live in a key file beside the instance (SQLite).
   */
  grantKeySet?(): KeySetStorage;
}

/** The whole store: every capability. */
export interface Store
  extends StoreLifecycle,
    ResourceStore,
    GrantUseStore,
    CancellationStore,
    DecisionStore,
    CheckpointStore,
    LogShippingStore,
    GroupLeaseStore,
    LimitStore,
    HistoryStore,
    ApprovalStore,
    IdempotencyStore,
    ConsoleSessionStore,
    McpSessionStore,
    PolicyRevisionStore,
    McpTaskStore {}
