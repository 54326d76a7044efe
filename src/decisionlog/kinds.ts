/**
 * The kinds of decision-log entries: for each, its `path` (the only place Writ's own `writ/*`
 * paths are named), its builder (what the entry records of the facts a caller knows) and what it
 * keeps out of the entry. Callers build an entry with its kind's builder and append it; no entry
 * is put together anywhere else.
 *
 * Every entry's input also passes the log's redaction rules when it is appended (`redact.ts`: a
 * `secret` action's arguments erased, configured pointers erased or masked, secret detectors), so
 * `redaction` says only what a kind leaves out before that.
 */
import { isRecord } from "../core/json.ts";
import {
  type ApprovalCollectedFacts,
  type ApprovalRefusalFacts,
  type ApprovalTransitionFacts,
  approvalCollectedParts,
  approvalRefusalParts,
  approvalTransitionParts,
} from "./entries/approvals.ts";
import { type ConsoleFacts, consoleParts } from "./entries/console.ts";
import { type ExecutionFacts, executionParts } from "./entries/execute.ts";
import {
  type HttpRefusalFacts,
  httpRefusalParts,
  type ResourceWriteFacts,
  resourceWriteParts,
  type TenancyFacts,
  tenancyParts,
} from "./entries/http.ts";
import {
  type EvaluatedFacts,
  evaluationEntry,
  type RefusalFacts,
  refusalParts,
  type ShadowFacts,
  shadowParts,
} from "./entries/policy.ts";
import type { DecisionParts } from "./log.ts";

export interface EntryKind<Facts> {
  /** The entries' path; null for policy decisions, whose path is the policy's entrypoint. */
  readonly path: string | null;
  /** What the entry leaves out of the facts, before the log's redaction rules. */
  readonly redaction: string;
  readonly build: (facts: Facts) => DecisionParts;
}

/** A kind of Writ's own, on a fixed path. */
function kind<Facts>(
  path: string,
  redaction: string,
  parts: (path: string, facts: Facts) => DecisionParts,
): EntryKind<Facts> {
  return { path, redaction, build: (facts) => parts(path, facts) };
}

export const ENTRY_KINDS = {
  /** A policy evaluation: a call, an approval's second evaluation, a Code Mode run. */
  decision: {
    path: null,
    redaction: "nothing: the policy input as evaluated",
    build: evaluationEntry,
  } satisfies EntryKind<EvaluatedFacts>,
  /** A refusal decided before any policy ran: a malformed payload, a refused token, an invalid call. */
  intake: kind<RefusalFacts>("writ/intake", "nothing: what the request named", refusalParts),
  /** A shadow policy's disagreement with the live decision (`policy.shadow`). */
  shadow: kind<ShadowFacts>(
    "writ/shadow",
    "the input: the live decision's entry holds it (by id); the live reasons by code",
    shadowParts,
  ),
  /** An execution with a grant: `POST /v1/execute`, an approved MCP call, a grant refused at dispatch. */
  execute: kind<ExecutionFacts>(
    "writ/execute",
    "the result's content (a summary only) and the grant's token (its claims only)",
    executionParts,
  ),
  /** A refusal the HTTP layer answered (401, 403, 400, 413) that nothing else logged. */
  http: kind<HttpRefusalFacts>(
    "writ/http",
    "the path sent (the route's pattern only) and a message's length past 500 characters",
    httpRefusalParts,
  ),
  /** A reach into another tenant, granted (a platform role) or refused. */
  tenancy: kind<TenancyFacts>(
    "writ/tenancy",
    "the actor's token (its id, tenant and roles only)",
    tenancyParts,
  ),
  /** A resource written by an admin, or refused. */
  resources: kind<ResourceWriteFacts>(
    "writ/resources",
    "the attributes (their digest only)",
    resourceWriteParts,
  ),
  /** An approval request's plain transition: rejected by a person, expired. */
  approvalTransition: kind<ApprovalTransitionFacts>(
    "writ/approvals",
    "the call's arguments (their digest only)",
    approvalTransitionParts,
  ),
  /** An approved request's grant collected by its requester. */
  approvalCollected: kind<ApprovalCollectedFacts>(
    "writ/approvals",
    "the call's arguments (their digest only) and the grant's token (its jti only)",
    approvalCollectedParts,
  ),
  /** An approver's decision refused. */
  approvalRefused: kind<ApprovalRefusalFacts>(
    "writ/approvals",
    "an approval id past 200 characters (the caller chose it)",
    approvalRefusalParts,
  ),
  /** A console sign-in (granted or refused) or sign-out. */
  console: kind<ConsoleFacts>(
    "writ/console",
    "the session's id and the token (a prefix of the session's hash only)",
    consoleParts,
  ),
} as const;

export type EntryKindName = keyof typeof ENTRY_KINDS;

export const refusalEntry = ENTRY_KINDS.intake.build;
export { evaluationEntry };
export const shadowEntry = ENTRY_KINDS.shadow.build;
export const executionEntry = ENTRY_KINDS.execute.build;
export const httpRefusalEntry = ENTRY_KINDS.http.build;
export const tenancyEntry = ENTRY_KINDS.tenancy.build;
export const resourceWriteEntry = ENTRY_KINDS.resources.build;
export const approvalTransitionEntry = ENTRY_KINDS.approvalTransition.build;
export const approvalCollectedEntry = ENTRY_KINDS.approvalCollected.build;
export const approvalRefusalEntry = ENTRY_KINDS.approvalRefused.build;
export const consoleEntry = ENTRY_KINDS.console.build;

/** The live decision a `writ/shadow` entry names (undefined for any other entry). */
export function shadowedDecisionId(entry: { path: string; input?: unknown }): string | undefined {
  if (entry.path !== ENTRY_KINDS.shadow.path || !isRecord(entry.input)) return undefined;
  const id = entry.input.live_decision_id;
  return typeof id === "string" ? id : undefined;
}
