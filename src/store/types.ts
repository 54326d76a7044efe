/**
 * The `Store` (DESIGN section 9): everything Writ keeps — resources, grant use, the decision log
 * (and, as they arrive, approvals and idempotency records). SQLite is the embedded default;
 * PostgreSQL implements the same interface for several instances. Methods are async so that
 * both fit; every method that changes state is atomic.
 */

import type { WritError } from "../core/errors.ts";
import type {
  CanonicalAction,
  Condition,
  DecisionKind,
  PolicyDecision,
  ProposalSource,
  Reason,
  Subject,
} from "../core/types.ts";
import type { KeySetStorage } from "../grants/key-storage.ts";
import type { LimitBucket, LimitCharge, LimitConsumption } from "./limit-usage.ts";

export type { LimitBucket, LimitCharge, LimitConsumption } from "./limit-usage.ts";

export interface StoredResource {
  type: string;
  id: string;
  owner: string;
  tenant: string;
  /** Increases by one on every change; compared-and-swapped by actions that carry a base. */
  revision: number;
  attributes: Record<string, unknown>;
  updated_at: string;
}

export interface ResourceWrite {
  type: string;
  id: string;
  owner: string;
  tenant: string;
  attributes: Record<string, unknown>;
}

/**
 * Whose data an administrative or review read or write may touch: one tenant's (every caller's
 * own), or every tenant's (a platform role, and only when the caller asks for it explicitly).
 */
export type TenantScope = { readonly tenant: string } | { readonly allTenants: true };

/** The scope of every tenant's data (platform roles only). */
export const ALL_TENANTS: TenantScope = Object.freeze({ allTenants: true });

/** The result of a scoped resource write. */
/** What `openOrCreateApproval` found or stored. */
export interface ApprovalOpening {
  record: ApprovalRecord;
  /** True when this call stored the request; false when an open one was there already. */
  created: boolean;
}

export type ScopedResourceWrite =
  | { ok: true; resource: StoredResource; previous: StoredResource | undefined }
  /** Another tenant holds this (type, id): nothing was written. */
  | { ok: false; reason: "held_by_another_tenant" };

/** One use of a grant, as `Store.consumeGrant` records it. */
export interface GrantUse {
  jti: string;
  /** Uses allowed in all (the grant's `max`, or a `max_uses` condition's). */
  maxUses: number;
  /** When the grant expires: no use counts from then on. */
  expiresAt: Date;
  /**
   * The resource the grant is bound to and the revision its decision saw (`null`: the resource
   * did not exist then): the use counts only while the resource is still at that revision, read
   * in the same statement that counts it.
   */
  resource?: { type: string; id: string; revision: number | null };
}

export type GrantConsumption =
  | { ok: true; uses: number }
  | { ok: false; reason: "exhausted" | "expired" }
  /** The resource moved: `revision` is where it is now (`null`: it does not exist). */
  | { ok: false; reason: "stale_revision"; revision: number | null };

/** Where an appended entry went in the chain. */
export interface ChainLink {
  seq: number;
  prev_hash: string;
  hash: string;
}

/** One entry's append: where it went in the chain, or why it was refused. */
export type EntryAppend = { ok: true; link: ChainLink } | { ok: false; error: WritError };

/** A decision log entry as stored (DESIGN section 8; OPA's field names where they exist). */
export interface DecisionLogEntry {
  seq: number;
  decision_id: string;
  /** ISO 8601 time the decision was made. */
  timestamp: string;
  /** The policy entrypoint, e.g. `writ/decision`; `writ/intake` for refusals before policy. */
  path: string;
  /** The policy input as stored: redacted. */
  input: unknown;
  /** The policy's answer (validated), or undefined when no policy ran. */
  result: unknown;
  bundles: { writ: { revision: string } };
  metrics: Record<string, number>;
  /** JSON Pointers of input parts removed entirely. */
  erased: string[];
  /** JSON Pointers of input parts replaced by a marker. */
  masked: string[];
  subject: string | null;
  tenant: string | null;
  action: string | null;
  resource: { type: string; id: string } | null;
  decision: DecisionKind | "error";
  reasons: Reason[];
  /** The error category when the call failed before or instead of a decision. */
  error: string | null;
  grant_jti: string | null;
  approval_id: string | null;
  conditions: Condition[];
  /** Writ's own id of the request that made the decision (minted per request). */
  request_id: string;
  /** The `X-Request-Id` its caller sent, when it sent a valid one; absent otherwise (and in entries logged before it was kept). */
  caller_request_id?: string;
  prev_hash: string;
  hash: string;
}

/** What a caller appends; the store assigns `seq`, `prev_hash` and `hash` atomically. */
export type NewDecisionEntry = Omit<DecisionLogEntry, "seq" | "prev_hash" | "hash">;

export interface DecisionFilter {
  subject?: string;
  tenant?: string;
  action?: string;
  decision?: DecisionKind | "error";
  reason?: string;
  resourceType?: string;
  resourceId?: string;
  /** The entry's policy path: `writ/shadow` lists a shadow policy's disagreements. */
  path?: string;
  /** A Code Mode run's id: the run's own entry and every call its program made (`input.context.run.id`). */
  run?: string;
  /** Inclusive lower bound, ISO 8601. */
  since?: string;
  /** Exclusive upper bound, ISO 8601. */
  until?: string;
}

export interface DecisionPage {
  entries: DecisionLogEntry[];
  /** Opaque; pass back to get the next page. Absent on the last page. */
  next_cursor?: string;
}

export const approvalStatuses = ["pending", "approved", "rejected", "expired"] as const;
export type ApprovalStatus = (typeof approvalStatuses)[number];

/** Why a decided approval ended as it did. */
export type ApprovalResolution = "approved" | "rejected" | "policy_denied" | "stale_revision" | "expired";

/** The grant released to the requester of an approved request. */
export interface ApprovalGrant {
  token: string;
  jti: string;
  audience: string;
  expires_at: string;
  max_uses: number;
  /** The arguments the grant is bound to (absent in grants collected by earlier releases). */
  arguments?: Record<string, unknown>;
}

/**
 * What an approval decided, kept until the requester collects the grant: the grant is minted
 * then (and lives its TTL from then), bound to this decision.
 */
export interface ApprovalRelease {
  /** The approving decision (logged when the approver approved): the grant's `dec`. */
  decision_id: string;
  policy_revision: string;
  /** The resource revision the approving decision saw: the grant's `res.rev`. */
  resource_revision: string | null;
  /** The approving decision: its conditions and grant TTL and uses shape the grant. */
  decision: PolicyDecision;
}

/** What identifies a proposed call for approvals: the same call proposed again finds its request. */
export type ApprovalCall = Pick<
  NewApproval,
  "requester" | "tool" | "action" | "resource" | "resource_revision"
>;

/** What the pipeline stores when the policy answers `require_approval` (DESIGN section 6). */
export interface NewApproval {
  id: string;
  /** The requester, as verified when the call was proposed; the policy re-runs with it. */
  requester: Subject;
  /** The contract (canonical name and version) and the model-facing tool name. */
  tool: { name: string; version: string; call_name: string };
  /** The canonical action: validated arguments and their digest. */
  action: CanonicalAction;
  resource: { type: string; id: string } | null;
  /** The resource's revision when the call was proposed (null: unknown resource). */
  resource_revision: number | null;
  policy_revision: string;
  /** The decision that asked for the approval. */
  decision_id: string;
  source: ProposalSource;
  session: string | null;
  approver_roles: string[];
  /** ISO 8601. */
  requested_at: string;
  /** ISO 8601. */
  expires_at: string;
}

export interface ApprovalRecord extends NewApproval {
  status: ApprovalStatus;
  resolution: ApprovalResolution | null;
  decided_by: string | null;
  decided_at: string | null;
  /** The approver's reason (required to reject). */
  reason: string | null;
  /** The reasons of the deciding step (policy reasons, stale revision, expiry). */
  reasons: Reason[];
  grant_jti: string | null;
  /** Set when the requester collected the grant (at most once). */
  grant: ApprovalGrant | null;
  /** Set when approved: what the grant is minted from when it is collected. */
  release: ApprovalRelease | null;
}

export interface ApprovalUpdate {
  status: Exclude<ApprovalStatus, "pending">;
  resolution: ApprovalResolution;
  decided_by: string | null;
  decided_at: string;
  reason: string | null;
  reasons: Reason[];
  grant?: ApprovalGrant | null;
  release?: ApprovalRelease | null;
}

export interface ApprovalFilter {
  status?: ApprovalStatus;
  /** Required: approvals are listed one tenant at a time. */
  tenant: string;
  /**
   * Who may see: approvals requested by `requester`, or (when given) any whose approver_roles
   * include one of `approverRoles`. Either alone narrows to that set; both together: the union.
   */
  requester?: string;
  approverRoles?: string[];
}

export interface ApprovalPage {
  approvals: ApprovalRecord[];
  next_cursor?: string;
}

/** The result of claiming an idempotency key (first request wins). */
export type IdempotencyClaim =
  | { state: "claimed" }
  | { state: "pending"; request_digest: string }
  | { state: "done"; request_digest: string; outcome: unknown };

/** A signed checkpoint of the decision log's head (see src/decisionlog/checkpoint.ts). */
export interface StoredCheckpoint {
  /** The head's seq when the checkpoint was signed. */
  seq: number;
  /** The hash of the entry at `seq`. */
  hash: string;
  /** ISO 8601 time it was signed. */
  time: string;
  /** The checkpoint key that signed it. */
  kid: string;
  /** The compact JWS of `{seq, hash, time}`: the only part a verifier trusts. */
  jws: string;
}

/** Where shipping the decision log to one destination got to (src/decisionlog/ship/). */
export interface LogShippingState {
  /** The last seq the destination acknowledged (0: none yet). */
  shipped_seq: number;
  /** The instance holding the lease to ship (null: released). */
  holder: string | null;
  lease_until: Date;
}

/** A claim of the shipping lease: held (by the claimer) or not, and the cursor as stored. */
export interface LogShippingClaim {
  held: boolean;
  shipped_seq: number;
}

/**
 * A console session (src/console/session.ts). The cookie holds an opaque random id; the store
 * keeps only its SHA-256, and who signed in (from the verified token; its claims are not kept).
 */
export interface ConsoleSession {
  /** SHA-256 (hex) of the session id. */
  id_hash: string;
  subject: string;
  tenant: string;
  issuer: string;
  roles: string[];
  scopes: string[];
  created_at: Date;
  last_seen_at: Date;
  /** min(the token's expiry, the configured maximum lifetime). */
  expires_at: Date;
  /** Set by sign-out. */
  revoked_at: Date | null;
}

export type NewConsoleSession = Omit<ConsoleSession, "last_seen_at" | "revoked_at">;

/** A console request's session: active (and now seen), or why it is not. */
export type ConsoleSessionUse =
  | { state: "active"; session: ConsoleSession }
  | { state: "revoked" | "expired" | "idle" | "unknown" };

/** Where a policy revision came from: a folder of sources and data, or a bundle. */
export const policySourceKinds = ["directory", "bundle"] as const;
export type PolicySourceKind = (typeof policySourceKinds)[number];

/** A policy revision Writ loaded, as listed (src/policy/revisions.ts says what its content holds). */
export interface PolicyRevisionInfo {
  /** The revision id decision-log entries name (`bundles.writ.revision`). */
  id: string;
  kind: PolicySourceKind;
  /** Where it was loaded from: the folder, the bundle file, the bundle server's URL. */
  origin: string;
  /** ISO 8601: when this revision was first loaded. */
  loaded_at: string;
  /** The content's size in bytes. */
  size: number;
  /** SHA-256 (hex) of the content. */
  digest: string;
}

/** An archived revision with its content: the sources and data files, or the bundle's bytes. */
export interface PolicyRevisionRecord extends PolicyRevisionInfo {
  content: Uint8Array;
}

/** What archiving a revision takes; the store adds the time, size and digest. */
export interface NewPolicyRevision {
  id: string;
  kind: PolicySourceKind;
  origin: string;
  content: Uint8Array;
}

export interface PolicyRevisionPage {
  revisions: PolicyRevisionInfo[];
  next_cursor?: string;
}

export interface Store {
  /** Creates the schema (idempotent, versioned migrations). */
  migrate(): Promise<void>;
  close(): Promise<void>;

  /**
   * The resource, whatever its tenant: for the pipeline (the policy compares tenants itself) and
   * the operator. Administrative surfaces use {@link Store.getResourceIn}.
   */
  getResource(type: string, id: string): Promise<StoredResource | undefined>;
  /** The resource when it belongs to `scope`; undefined (as if absent) when another tenant holds it. */
  getResourceIn(scope: TenantScope, type: string, id: string): Promise<StoredResource | undefined>;
  /**
   * Creates or replaces a resource within `scope`: with a tenant scope, `resource.tenant` must be
   * that tenant (else `forbidden`), and a (type, id) another tenant holds is refused, atomically.
   */
  putResourceIn(scope: TenantScope, resource: ResourceWrite): Promise<ScopedResourceWrite>;
  /** Creates or replaces a resource; the revision becomes the previous one plus one. */
  putResource(resource: ResourceWrite): Promise<StoredResource>;
  /**
   * Replaces the attributes when the stored revision still equals `expectedRevision`;
   * undefined (nothing written) when it moved.
   */
  updateResourceAttributes(
    type: string,
    id: string,
    expectedRevision: number,
    attributes: Record<string, unknown>,
  ): Promise<StoredResource | undefined>;

  /**
   * Records one use of a grant; refuses once `maxUses` uses were recorded, after `expiresAt`, or
   * (for a grant bound to a resource) once the resource moved from the revision it was decided
   * on: checked and counted atomically, so a grant is never spent on a resource that changed.
   */
  consumeGrant(use: GrantUse, now?: Date): Promise<GrantConsumption>;

  /**
   * Asks whichever instance runs the call named `key` to cancel it: a caller's MCP
   * `notifications/cancelled` that reached another instance. Kept until `expiresAt`.
   */
  requestCancellation(key: string, reason: string | undefined, expiresAt: Date): Promise<void>;

  /** The cancellations asked for among `keys` (not expired), each with its reason. */
  requestedCancellations(keys: readonly string[]): Promise<Map<string, string | undefined>>;

  /**
   * Appends a decision-log entry: assigns the next `seq`, links it to the previous entry's
   * hash, and stores it with its hash (`entryHash` of chain.ts), in one transaction. Durable
   * when it resolves.
   */
  appendDecision(entry: NewDecisionEntry): Promise<DecisionLogEntry>;
  /** Like appendDecision for several entries, in order, in one transaction: all or none. */
  appendDecisions(entries: readonly NewDecisionEntry[]): Promise<DecisionLogEntry[]>;
  /**
   * Appends entries in order, each on its own: one that is refused (invalid, or a decision id
   * already in the log) fails alone and takes no seq. Answers where each entry went in the
   * chain, or why it was refused: what the decision log answers an append with, without carrying
   * the stored entries back. Durable when it resolves.
   */
  appendEachDecision(entries: readonly NewDecisionEntry[]): Promise<EntryAppend[]>;
  /**
   * Whether appends are applied in the order they were called even while several are in flight
   * (the decision log then sends the next batch before the last one is answered).
   */
  readonly ordersAppends: boolean;
  /** Any entry, whatever its tenant (the operator's CLI, the pipeline); reviewers use getDecisionIn. */
  getDecision(decisionId: string): Promise<DecisionLogEntry | undefined>;
  /** The entry when its tenant is `scope`'s; undefined (as if absent) otherwise. */
  getDecisionIn(scope: TenantScope, decisionId: string): Promise<DecisionLogEntry | undefined>;
  /** Newest first, whatever the tenant (the operator's CLI); reviewers use queryDecisionsIn. */
  queryDecisions(filter: DecisionFilter, limit: number, cursor?: string): Promise<DecisionPage>;
  /**
   * Newest first, only entries of `scope`'s tenant (a `filter.tenant` naming another tenant
   * matches nothing). Cursors are bound to the scope: one handed out in another scope is refused.
   */
  queryDecisionsIn(
    scope: TenantScope,
    filter: DecisionFilter,
    limit: number,
    cursor?: string,
  ): Promise<DecisionPage>;
  /** Entries in `seq` order from `fromSeq` (inclusive), at most `limit`. */
  readDecisions(fromSeq: number, limit: number): Promise<DecisionLogEntry[]>;

  /** The log's last entry (seq and hash), or undefined while it is empty. */
  decisionHead(): Promise<{ seq: number; hash: string } | undefined>;

  /**
   * Stores a signed checkpoint; false (nothing written) when one for that seq exists already:
   * instances that checkpoint the same head keep the first.
   */
  addCheckpoint(checkpoint: StoredCheckpoint): Promise<boolean>;
  /** The checkpoint with the highest seq, or undefined when there is none. */
  latestCheckpoint(): Promise<StoredCheckpoint | undefined>;
  /** Checkpoints in seq order from `fromSeq` (inclusive), at most `limit`. */
  readCheckpoints(fromSeq: number, limit: number): Promise<StoredCheckpoint[]>;
  /**
   * The checkpoint signing key set kept in the store (every instance on it shares the key);
   * used unless `decision_log.checkpoints.key_file` names a file.
   */
  checkpointKeySet(): KeySetStorage;

  /**
   * Takes or renews the lease to ship the decision log to `target` (until `leaseUntil`) unless
   * another holder's lease still runs at `now`; answers whether this holder has it, and the
   * destination's cursor. A target never seen starts at 0.
   */
  claimLogShipping(target: string, holder: string, leaseUntil: Date, now?: Date): Promise<LogShippingClaim>;
  /**
   * Records that `target` acknowledged every entry up to `seq` (the cursor never moves back) and
   * renews the lease; false (nothing written) when `holder` no longer has the lease.
   */
  advanceLogShipping(target: string, holder: string, seq: number, leaseUntil: Date): Promise<boolean>;
  /** Gives the lease up, when `holder` has it (shutdown: another instance takes over at once). */
  releaseLogShipping(target: string, holder: string): Promise<void>;
  /** The destination's cursor and lease, or undefined when nothing was ever shipped to it. */
  logShipping(target: string): Promise<LogShippingState | undefined>;

  /**
   * Takes or renews the lease of concurrency group `group` for `holder` (until `leaseUntil`)
   * unless another holder's lease still runs at `now`: whether `holder` has it now. Committing
   * calls of one group run only while their instance holds its lease (src/schedule/groups.ts).
   */
  claimGroupLease(group: string, holder: string, leaseUntil: Date, now?: Date): Promise<boolean>;
  /** Gives the lease up when `holder` has it (its call ended): the next claim gets it at once. */
  releaseGroupLease(group: string, holder: string): Promise<void>;
  /**
   * What is used of each bucket at `now` (0 for a bucket never charged), in the order given: the
   * usage the policy sees before it decides (src/limits/).
   */
  limitUsage(buckets: readonly LimitBucket[], now?: Date): Promise<number[]>;
  /**
   * Charges every bucket at once, atomically across instances: when each has room for its cost
   * at `now`, all are charged; otherwise none is (nothing written) and the answer says which
   * were over.
   */
  consumeLimits(charges: readonly LimitCharge[], now?: Date): Promise<LimitConsumption>;

  /** Stores a new approval request, status `pending`. */
  createApproval(request: NewApproval): Promise<ApprovalRecord>;
  /**
   * The open request for the same call as `request` (as `findOpenApproval` finds it), or else
   * `request` stored as a new pending one, in one atomic step across instances: of any number of
   * proposals of one call racing on any number of instances, exactly one opens a request and the
   * others get it back (`created: false`).
   */
  openOrCreateApproval(request: NewApproval, now?: Date): Promise<ApprovalOpening>;
  getApproval(id: string): Promise<ApprovalRecord | undefined>;
  /** Newest first. */
  listApprovals(filter: ApprovalFilter, limit: number, cursor?: string): Promise<ApprovalPage>;
  /**
   * Compare-and-swap: applies `update` only while the status is still `expectedStatus` (and, for
   * any outcome but `expired`, only before `expires_at`). Undefined when it was already decided,
   * expired, or does not exist: an approval is decided exactly once.
   */
  decideApproval(
    id: string,
    expectedStatus: "pending",
    update: ApprovalUpdate,
    now?: Date,
  ): Promise<ApprovalRecord | undefined>;
  /**
   * Compare-and-swap on an approved request whose grant was not collected yet: records the grant
   * released to its requester, only before `expires_at`. Undefined when it was already collected,
   * is not approved, expired, or does not exist: a request releases at most one grant.
   */
  collectApprovalGrant(id: string, grant: ApprovalGrant, now?: Date): Promise<ApprovalRecord | undefined>;
  /**
   * Ends an approved request whose grant was never collected: `expired` once `expires_at`
   * passed, or `rejected` (its resource moved since the approval: `stale_revision`) at any time.
   * Undefined when it was collected, is not approved, is not due, or does not exist.
   */
  closeUncollectedApproval(
    id: string,
    update: ApprovalUpdate,
    now?: Date,
  ): Promise<ApprovalRecord | undefined>;
  /**
   * The newest request for this exact call (requester, contract, action and argument digest,
   * resource and its revision) that is still open: pending, or approved with its grant not yet
   * collected, and not past `expires_at`.
   */
  findOpenApproval(call: ApprovalCall, now?: Date): Promise<ApprovalRecord | undefined>;

  /**
   * Atomically claims `key` for `subject`: `claimed` when no live claim existed (this request
   * must execute and then `completeIdempotency` or `releaseIdempotency`), otherwise the existing
   * claim (`pending` while its request runs, `done` with the stored outcome). Expired claims are
   * replaced.
   */
  claimIdempotency(
    subject: string,
    key: string,
    requestDigest: string,
    expiresAt: Date,
    now?: Date,
  ): Promise<IdempotencyClaim>;
  /** Stores the outcome of a claimed key (state `done`). */
  completeIdempotency(subject: string, key: string, outcome: unknown): Promise<void>;
  /** Drops a pending claim (the request failed without an outcome worth replaying). */
  releaseIdempotency(subject: string, key: string): Promise<void>;

  /** Stores a new console session (and prunes the expired ones). */
  createConsoleSession(session: NewConsoleSession): Promise<void>;
  /**
   * Loads the session whose id hashes to `idHash` for a console request: when it is not revoked,
   * not past `expires_at` and (with `idleTimeoutMs`) seen within that time, it is marked seen
   * `now`, atomically; otherwise the reason it is not active.
   */
  useConsoleSession(idHash: string, idleTimeoutMs: number | null, now?: Date): Promise<ConsoleSessionUse>;
  /** Revokes an active session (sign-out): the revoked session; undefined when it was not active. */
  revokeConsoleSession(idHash: string, now?: Date): Promise<ConsoleSession | undefined>;
  /** Deletes sessions past `expires_at` (revoked or not); returns how many. */
  pruneConsoleSessions(now?: Date): Promise<number>;

  /**
   * Keeps a policy revision Writ loaded (policies are the deployment's: no tenant). Idempotent:
   * true when it was new, false (nothing written) when that id is archived already.
   */
  archivePolicyRevision(revision: NewPolicyRevision, now?: Date): Promise<boolean>;
  /** The archived revisions, newest first, without their content. */
  listPolicyRevisions(limit: number, cursor?: string): Promise<PolicyRevisionPage>;
  /** One archived revision with its content, or undefined when that id was never archived. */
  getPolicyRevision(id: string): Promise<PolicyRevisionRecord | undefined>;

  /**
   * Present when the store also holds the grant signing key set, shared by every instance on it
   * (PostgreSQL); absent when the keys live in a key file beside the instance (SQLite).
   */
  grantKeySet?(): KeySetStorage;
}
