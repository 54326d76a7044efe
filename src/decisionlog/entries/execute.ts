/** The entry of one execution (`POST /v1/execute`, an approved MCP call, a grant refused at dispatch). */
import type { WritError } from "../../core/errors.ts";
import type { ResourceRef, Subject } from "../../core/types.ts";
import type { DecisionParts } from "../log.ts";

/** What an execution entry records of the grant presented (claims unverified unless `verified`). */
export interface ExecutedGrant {
  jti: string | null;
  /** The decision the grant came from (its `dec` claim). */
  decision_id: string | null;
  issued_to: string | null;
  verified: boolean;
}

export interface ExecutionFacts {
  subject: Pick<Subject, "id" | "tenant"> | null;
  tool: string | null;
  action: string | null;
  resource: ResourceRef | null;
  grant: ExecutedGrant;
  requestId: string;
  policyRevision: string;
  /** How it ended: ran (a summary, never the content), the grant refused, or an error. */
  outcome:
    | { kind: "ran"; summary: Record<string, unknown> }
    | { kind: "grant_refused"; code: string; error: WritError }
    | { kind: "failed"; error: WritError };
}

/**
 * One execution: `allow` when it ran, `deny` when the grant was refused (the reason's code is the
 * grant error code), `error` when anything else stopped it (the error's category).
 */
export function executionParts(path: string, f: ExecutionFacts): DecisionParts {
  const o = f.outcome;
  const common = {
    path,
    policy_revision: f.policyRevision,
    subject: f.subject?.id ?? null,
    tenant: f.subject?.tenant ?? null,
    action: f.action,
    resource: f.resource,
    grant_jti: f.grant.verified ? f.grant.jti : null,
    request_id: f.requestId,
  };
  const input = { tool: f.tool, grant: f.grant };
  if (o.kind === "ran") {
    return {
      ...common,
      input: { ...input, result: o.summary },
      decision: "allow",
      reasons: [{ code: "executed", message: `${f.tool} ran with its grant`, visible_to_model: false }],
    };
  }
  return {
    ...common,
    input: { ...input, effect_committed: o.error.effectCommitted },
    decision: o.kind === "grant_refused" ? "deny" : "error",
    error: o.error.category,
    reasons: [
      {
        code: o.kind === "grant_refused" ? o.code : o.error.category,
        message: o.error.message,
        visible_to_model: true,
      },
    ],
  };
}
