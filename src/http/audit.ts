/**
 * Every refusal the HTTP layer answers is on the decision log (issue 15): 401 (no or a bad
 * token), 403 (a role or tenant the caller lacks), 400 (a malformed body or query, refused keys)
 * and 413 (a body over the limit), on every route it is mounted on. A surface that logged the
 * refusal itself (the pipeline, tenancy, approvals, executions) is not logged twice: the log
 * notes a refusal appended while the request ran (`trackRefusals`).
 *
 * Refusals of a caller not (yet) authenticated are aggregated per source address, category
 * and route (`RefusalAggregator`): a flood of bad tokens is a few entries with counts, not one per request.
 * An authenticated caller's refusals are each logged: they name who.
 */
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context, MiddlewareHandler } from "hono";
import { WritError } from "../core/errors.ts";
import type { Subject } from "../core/types.ts";
import {
  httpRefusalEntry,
  type RefusalAggregator,
  type RefusalLog,
  refusalReason,
  trackRefusals,
} from "../decisionlog/index.ts";
import type { RequestIdVariables } from "./env.ts";

/** The statuses whose answers are refusals to put on the record. */
const AUDITED = new Set([400, 401, 403, 413]);

export interface RefusalAudit {
  log: RefusalLog;
  aggregator: RefusalAggregator;
  policy: { readonly revision: string | undefined };
}

type AuditEnv = { Variables: RequestIdVariables & { subject?: Subject } };

export function auditRefusals(audit: RefusalAudit): MiddlewareHandler<AuditEnv> {
  return async (c, next) => {
    const { refusalLogged } = await trackRefusals(c.get("requestId"), next);
    if (refusalLogged || !AUDITED.has(c.res.status)) return;
    const subject = c.get("subject") ?? null;
    const source = sourceOf(c);
    const parts = httpRefusalEntry({
      surface: `${c.req.method} ${c.req.routePath}`,
      source,
      subject,
      error: refusalOf(c.error, c.res.status),
      requestId: c.get("requestId") ?? "none",
      policyRevision: audit.policy.revision ?? "none",
    });
    if (subject) await audit.log.append(parts);
    // Keyed by the route's pattern (a bounded set), never by what the caller sent.
    else {
      const error = refusalOf(c.error, c.res.status);
      const reason = refusalReason(error.category, error.message);
      await audit.aggregator.record(`${source}\u0000${reason}\u0000${parts.action}`, parts);
    }
  };
}

/** The error answered; a refusal answered without one (the body limit's 413) from its status. */
function refusalOf(error: unknown, status: number): WritError {
  if (error instanceof WritError) return error;
  return status === 413
    ? new WritError("payload_too_large", "the request body is larger than the limit", {
        suggestedFix: "send a smaller body",
      })
    : WritError.from(error);
}

/** The caller's address (the socket's peer); `unknown` off a Node server (tests' `app.request`). */
function sourceOf(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    return "unknown";
  }
}
