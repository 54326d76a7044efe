/**
 * A Writ decision-log entry as an OPA decision-log event, for consumers built for OPA's decision
 * logs (https://www.openpolicyagent.org/docs/management-decision-logs): `decision_id`, `path`,
 * `input`, `result`, `timestamp`, `bundles`, `metrics`, `erased`, `masked`, `labels`,
 * `requested_by`, `req_id`. OPA's `erased`/`masked` pointers are rooted at the event (`/input/…`);
 * Writ stores them relative to the input. Writ's own fields that OPA has no name for (decision,
 * reasons, grant, approval, the hash chain) travel as string labels, which is what OPA's `labels`
 * carry.
 */
import type { DecisionLogEntry } from "../store/types.ts";

export interface OpaDecisionEvent {
  decision_id: string;
  path: string;
  input?: unknown;
  result?: unknown;
  timestamp: string;
  bundles: Record<string, { revision: string }>;
  metrics: Record<string, number>;
  erased: string[];
  masked: string[];
  labels: Record<string, string>;
  /** Who asked: `tenant/subject` (OPA puts the client address here; Writ knows the identity). */
  requested_by: string;
  /** OPA numbers requests per process; Writ's seq is the position in the log. */
  req_id: number;
}

function underInput(pointer: string): string {
  return `/input${pointer}`;
}

function labelsOf(entry: DecisionLogEntry): Record<string, string> {
  const labels: Record<string, string> = {
    app: "writ",
    decision: entry.decision,
    request_id: entry.request_id,
    hash: entry.hash,
    prev_hash: entry.prev_hash,
  };
  if (entry.caller_request_id !== undefined) labels.caller_request_id = entry.caller_request_id;
  if (entry.action !== null) labels.action = entry.action;
  if (entry.resource !== null) labels.resource = `${entry.resource.type}/${entry.resource.id}`;
  if (entry.reasons.length > 0) labels.reasons = entry.reasons.map((r) => r.code).join(",");
  if (entry.error !== null) labels.error = entry.error;
  if (entry.grant_jti !== null) labels.grant_jti = entry.grant_jti;
  if (entry.approval_id !== null) labels.approval_id = entry.approval_id;
  return labels;
}

export function toOpaDecisionEvent(entry: DecisionLogEntry): OpaDecisionEvent {
  return {
    decision_id: entry.decision_id,
    path: entry.path,
    ...(entry.input === undefined ? {} : { input: entry.input }),
    ...(entry.result === undefined ? {} : { result: entry.result }),
    timestamp: entry.timestamp,
    bundles: entry.bundles,
    metrics: entry.metrics,
    erased: entry.erased.map(underInput),
    masked: entry.masked.map(underInput),
    labels: labelsOf(entry),
    requested_by: entry.subject === null ? "" : `${entry.tenant ?? ""}/${entry.subject}`,
    req_id: entry.seq,
  };
}
