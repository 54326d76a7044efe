/**
 * Storage (DESIGN section 9): the `Store` and its capability interfaces (types.ts), embedded
 * SQLite and shared PostgreSQL.
 */

export { DEFAULT_SQLITE_FILE, type PostgresConfig, type StoreConfig, storeConfigSchema } from "./config.ts";
export { UnreadableEntryError } from "./errors.ts";
export { DATABASE_URL_VARIABLE, openStore, postgresSettings } from "./open.ts";
export { MAX_PAGE_SIZE, matchesDecisionFilter, normalizeFilter } from "./paging.ts";
export { PostgresStore, type PostgresStoreOptions } from "./postgres.ts";
export { decisionLogEntrySchema, GENESIS_HASH } from "./schema.ts";
export { SqliteStore, type SqliteStoreOptions } from "./sqlite.ts";
export type * from "./types.ts";
export { ALL_TENANTS, approvalStatuses, policySourceKinds } from "./types.ts";
