/**
 * What the SQLite and PostgreSQL stores share: the `Store` assembled from one implementation per
 * capability (resources.ts, decisions.ts, approvals.ts, …), each the capability's SQL written
 * once over a `SqlAccess` (this store's `rows` and `execute`, dialect, clock and location). A
 * dialect's store adds what differs: connecting, migrating, and the methods that lock or retry
 * (`DialectMethods`: grant uses, the decision log's append, approval decisions and openings,
 * idempotency claims, limit charges).
 */
import type { KeySetStorage } from "../grants/key-storage.ts";
import { type ApprovalDecision, type ApprovalOpeningRequest, SqlApprovals } from "./approvals.ts";
import { SqlCancellations } from "./cancellations.ts";
import { SqlCheckpoints } from "./checkpoints.ts";
import { SqlConsoleSessions } from "./console-sessions.ts";
import type { DecisionLogEntry, NewDecisionEntry } from "./decision-entry.ts";
import { SqlDecisions } from "./decisions.ts";
import type { Dialect } from "./dialect.ts";
import { pruneGrantsQuery } from "./grant-uses.ts";
import { SqlGroupLeases } from "./group-leases.ts";
import { SqlHistory } from "./history.ts";
import { type IdempotencyClaim, type IdempotencyRequest, SqlIdempotency } from "./idempotency.ts";
import { SqlLimits } from "./limit-usage.ts";
import { SqlLogShipping } from "./log-shipping.ts";
import { SqlMcpSessions } from "./mcp-sessions.ts";
import { SqlMcpTasks } from "./mcp-tasks.ts";
import { SqlPolicyRevisions } from "./policy-revisions.ts";
import { SqlResources } from "./resources.ts";
import type { Sql } from "./sql.ts";
import type { SqlAccess } from "./sql-access.ts";
import type { Store } from "./types.ts";

/** What each dialect's store adds to this class to be a whole `Store`. */
type DialectMethods = "consumeGrant" | "appendDecisions" | "consumeLimits";

type Args<K extends keyof Store> = Store[K] extends (...args: infer A) => unknown ? A : never;

export abstract class SqlStore implements Omit<Store, DialectMethods> {
  /** Where the data is, for messages (a file path, or a URL without its password). */
  abstract readonly location: string;
  protected readonly dialect: Dialect;
  /** The clock for `updated_at` and grant expiry. */
  protected readonly clock: () => Date;
  /** This store's statements, as the capabilities run them. */
  protected readonly db: SqlAccess;
  readonly #resources: SqlResources;
  readonly #decisions: SqlDecisions;
  readonly #checkpoints: SqlCheckpoints;
  readonly #shipping: SqlLogShipping;
  readonly #leases: SqlGroupLeases;
  readonly #limits: SqlLimits;
  readonly #history: SqlHistory;
  readonly #approvals: SqlApprovals;
  readonly #idempotency: SqlIdempotency;
  readonly #sessions: SqlConsoleSessions;
  readonly #revisions: SqlPolicyRevisions;
  readonly #cancellations: SqlCancellations;
  readonly #mcpSessions: SqlMcpSessions;
  readonly #tasks: SqlMcpTasks;

  constructor(dialect: Dialect, clock: (() => Date) | undefined) {
    this.dialect = dialect;
    this.clock = clock ?? (() => new Date());
    const db = this.#access();
    this.db = db;
    this.#resources = new SqlResources(db);
    this.#decisions = new SqlDecisions(db, (entries) => this.appendDecisions(entries));
    this.#checkpoints = new SqlCheckpoints(db);
    this.#shipping = new SqlLogShipping(db);
    this.#leases = new SqlGroupLeases(db);
    this.#limits = new SqlLimits(db);
    this.#history = new SqlHistory(db);
    this.#approvals = new SqlApprovals(db, {
      openOrInsert: (request) => this.openOrInsertApproval(request),
      decide: (decision) => this.decideApprovalRow(decision),
    });
    this.#idempotency = new SqlIdempotency(db, (request) => this.claimIdempotencyKey(request));
    this.#sessions = new SqlConsoleSessions(db);
    this.#revisions = new SqlPolicyRevisions(db);
    this.#cancellations = new SqlCancellations(db);
    this.#mcpSessions = new SqlMcpSessions(db);
    this.#tasks = new SqlMcpTasks(db);
  }

  /** This store as the capabilities see it (`location` is read when used: subclasses set it). */
  #access(): SqlAccess {
    const store = this;
    return {
      dialect: this.dialect,
      clock: this.clock,
      get location() {
        return store.location;
      },
      rows: (what, query) => this.rows(what, query),
      execute: (what, query) => this.execute(what, query),
    };
  }

  abstract migrate(): Promise<void>;
  abstract close(): Promise<void>;

  /** `store` with the migrations applied; closed again when they fail. */
  protected static async migrated<S extends SqlStore>(store: S): Promise<S> {
    try {
      await store.migrate();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /** The rows a statement returns; failures as `WritError`s that say they happened trying `what`. */
  protected abstract rows(what: string, query: Sql): Promise<unknown[]>;
  /** Runs a statement that returns no rows; how many rows it changed. */
  protected abstract execute(what: string, query: Sql): Promise<number>;
  /** The dialect's append, under its own lock (the shared `appendDecision` calls it). */
  abstract appendDecisions(entries: readonly NewDecisionEntry[]): Promise<DecisionLogEntry[]>;
  /** The dialect's open-or-insert of an approval request, under its lock (`ApprovalLocking`). */
  protected abstract openOrInsertApproval(
    request: ApprovalOpeningRequest,
  ): Promise<{ created: boolean; row: unknown }>;
  /** The dialect's decision of a pending approval: the row after it, or undefined (`ApprovalLocking`). */
  protected abstract decideApprovalRow(decision: ApprovalDecision): Promise<unknown>;
  /** The dialect's run of `claimIdempotencySteps` under its own locking. */
  protected abstract claimIdempotencyKey(request: IdempotencyRequest): Promise<IdempotencyClaim>;

  /** Deletes the use records of grants that expired at or before `now`; returns how many. */
  async pruneExpiredGrants(now: Date = this.clock()): Promise<number> {
    return this.execute("prune expired grant uses", pruneGrantsQuery(now));
  }

  // Each capability's methods, as its implementation answers them.
  getResource(...a: Args<"getResource">) {
    return this.#resources.getResource(...a);
  }
  getResourceIn(...a: Args<"getResourceIn">) {
    return this.#resources.getResourceIn(...a);
  }
  putResource(...a: Args<"putResource">) {
    return this.#resources.putResource(...a);
  }
  putResourceIn(...a: Args<"putResourceIn">) {
    return this.#resources.putResourceIn(...a);
  }
  updateResourceAttributes(...a: Args<"updateResourceAttributes">) {
    return this.#resources.updateResourceAttributes(...a);
  }

  /** Appends may be answered out of call order when several are in flight (a pool of connections). */
  readonly ordersAppends: boolean = false;
  appendDecision(...a: Args<"appendDecision">) {
    return this.#decisions.appendDecision(...a);
  }
  appendEachDecision(...a: Args<"appendEachDecision">) {
    return this.#decisions.appendEachDecision(...a);
  }
  getDecision(...a: Args<"getDecision">) {
    return this.#decisions.getDecision(...a);
  }
  getDecisionIn(...a: Args<"getDecisionIn">) {
    return this.#decisions.getDecisionIn(...a);
  }
  queryDecisions(...a: Args<"queryDecisions">) {
    return this.#decisions.queryDecisions(...a);
  }
  queryDecisionsIn(...a: Args<"queryDecisionsIn">) {
    return this.#decisions.queryDecisionsIn(...a);
  }
  readDecisions(...a: Args<"readDecisions">) {
    return this.#decisions.readDecisions(...a);
  }
  decisionHead() {
    return this.#decisions.decisionHead();
  }

  addCheckpoint(...a: Args<"addCheckpoint">) {
    return this.#checkpoints.addCheckpoint(...a);
  }
  latestCheckpoint() {
    return this.#checkpoints.latestCheckpoint();
  }
  readCheckpoints(...a: Args<"readCheckpoints">) {
    return this.#checkpoints.readCheckpoints(...a);
  }
  checkpointKeySet(): KeySetStorage {
    return this.#checkpoints.checkpointKeySet();
  }

  claimLogShipping(...a: Args<"claimLogShipping">) {
    return this.#shipping.claimLogShipping(...a);
  }
  advanceLogShipping(...a: Args<"advanceLogShipping">) {
    return this.#shipping.advanceLogShipping(...a);
  }
  releaseLogShipping(...a: Args<"releaseLogShipping">) {
    return this.#shipping.releaseLogShipping(...a);
  }
  logShipping(...a: Args<"logShipping">) {
    return this.#shipping.logShipping(...a);
  }

  claimGroupLease(...a: Args<"claimGroupLease">) {
    return this.#leases.claimGroupLease(...a);
  }
  releaseGroupLease(...a: Args<"releaseGroupLease">) {
    return this.#leases.releaseGroupLease(...a);
  }
  limitUsage(...a: Args<"limitUsage">) {
    return this.#limits.limitUsage(...a);
  }
  historyBuckets(...a: Args<"historyBuckets">) {
    return this.#history.historyBuckets(...a);
  }
  pruneHistory(...a: Args<"pruneHistory">) {
    return this.#history.pruneHistory(...a);
  }

  createApproval(...a: Args<"createApproval">) {
    return this.#approvals.createApproval(...a);
  }
  openOrCreateApproval(...a: Args<"openOrCreateApproval">) {
    return this.#approvals.openOrCreateApproval(...a);
  }
  decideApproval(...a: Args<"decideApproval">) {
    return this.#approvals.decideApproval(...a);
  }
  getApproval(...a: Args<"getApproval">) {
    return this.#approvals.getApproval(...a);
  }
  listApprovals(...a: Args<"listApprovals">) {
    return this.#approvals.listApprovals(...a);
  }
  findOpenApproval(...a: Args<"findOpenApproval">) {
    return this.#approvals.findOpenApproval(...a);
  }
  collectApprovalGrant(...a: Args<"collectApprovalGrant">) {
    return this.#approvals.collectApprovalGrant(...a);
  }
  closeUncollectedApproval(...a: Args<"closeUncollectedApproval">) {
    return this.#approvals.closeUncollectedApproval(...a);
  }

  claimIdempotency(...a: Args<"claimIdempotency">) {
    return this.#idempotency.claimIdempotency(...a);
  }
  completeIdempotency(...a: Args<"completeIdempotency">) {
    return this.#idempotency.completeIdempotency(...a);
  }
  releaseIdempotency(...a: Args<"releaseIdempotency">) {
    return this.#idempotency.releaseIdempotency(...a);
  }

  createConsoleSession(...a: Args<"createConsoleSession">) {
    return this.#sessions.createConsoleSession(...a);
  }
  useConsoleSession(...a: Args<"useConsoleSession">) {
    return this.#sessions.useConsoleSession(...a);
  }
  revokeConsoleSession(...a: Args<"revokeConsoleSession">) {
    return this.#sessions.revokeConsoleSession(...a);
  }
  pruneConsoleSessions(...a: Args<"pruneConsoleSessions">) {
    return this.#sessions.pruneConsoleSessions(...a);
  }

  archivePolicyRevision(...a: Args<"archivePolicyRevision">) {
    return this.#revisions.archivePolicyRevision(...a);
  }
  listPolicyRevisions(...a: Args<"listPolicyRevisions">) {
    return this.#revisions.listPolicyRevisions(...a);
  }
  getPolicyRevision(...a: Args<"getPolicyRevision">) {
    return this.#revisions.getPolicyRevision(...a);
  }

  createMcpSession(...a: Args<"createMcpSession">) {
    return this.#mcpSessions.createMcpSession(...a);
  }
  readMcpSession(...a: Args<"readMcpSession">) {
    return this.#mcpSessions.readMcpSession(...a);
  }
  deleteMcpSession(...a: Args<"deleteMcpSession">) {
    return this.#mcpSessions.deleteMcpSession(...a);
  }
  setMcpSubscription(...a: Args<"setMcpSubscription">) {
    return this.#mcpSessions.setMcpSubscription(...a);
  }
  mcpSubscriptions(...a: Args<"mcpSubscriptions">) {
    return this.#mcpSessions.mcpSubscriptions(...a);
  }
  appendMcpEvent(...a: Args<"appendMcpEvent">) {
    return this.#mcpSessions.appendMcpEvent(...a);
  }
  mcpEventStream(...a: Args<"mcpEventStream">) {
    return this.#mcpSessions.mcpEventStream(...a);
  }
  mcpEventsAfter(...a: Args<"mcpEventsAfter">) {
    return this.#mcpSessions.mcpEventsAfter(...a);
  }

  requestCancellation(...a: Args<"requestCancellation">) {
    return this.#cancellations.requestCancellation(...a);
  }
  requestedCancellations(...a: Args<"requestedCancellations">) {
    return this.#cancellations.requestedCancellations(...a);
  }

  createMcpTask(...a: Args<"createMcpTask">) {
    return this.#tasks.createMcpTask(...a);
  }
  getMcpTask(...a: Args<"getMcpTask">) {
    return this.#tasks.getMcpTask(...a);
  }
  updateMcpTask(...a: Args<"updateMcpTask">) {
    return this.#tasks.updateMcpTask(...a);
  }
}
