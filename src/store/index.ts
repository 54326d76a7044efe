/** Storage (DESIGN section 9): the `Store` interface and its embedded SQLite implementation. */
export { UnreadableEntryError } from "./errors.ts";
export { openStore } from "./open.ts";
export { MAX_PAGE_SIZE, matchesDecisionFilter, normalizeFilter } from "./paging.ts";
export { decisionLogEntrySchema, GENESIS_HASH } from "./schema.ts";
export { SqliteStore, type SqliteStoreOptions } from "./sqlite.ts";
export type {
  ApprovalFilter,
  ApprovalGrant,
  ApprovalPage,
  ApprovalRecord,
  ApprovalResolution,
  ApprovalStatus,
  ApprovalUpdate,
  DecisionFilter,
  DecisionLogEntry,
  DecisionPage,
  GrantConsumption,
  IdempotencyClaim,
  NewApproval,
  NewDecisionEntry,
  ResourceWrite,
  Store,
  StoredResource,
} from "./types.ts";
export { approvalStatuses } from "./types.ts";
