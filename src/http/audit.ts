/**
 * The audit interceptor, one for every entrance (the HTTP API, `/mcp` and the console), after the
 * request id (issue 28; Cerbos's audit interceptor is the model): it opens the request on the
 * gateway's decision log while the request is answered (the caller's `X-Request-Id` goes into
 * every entry appended for it; `decisionlog/requests.ts`), and once the handler is done puts the
 * answer on the record when it is a refusal nothing logged itself.
 *
 * Every refusal an entrance answers is on the decision log (issue 15): 401 (no or a bad token),
 * 403 (a role or tenant the caller lacks, a console form from another origin), 400 (a malformed
 * body or query, refused keys) and 413 (a body over the limit). A surface that logged the refusal
 * itself (the pipeline, tenancy, approvals, executions, console sign-ins) is not logged twice:
 * the log notes a refusal appended for the request while it ran.
 *
 * Refusals of a caller not (yet) authenticated are aggregated per source address, category
 * and route (`RefusalAggregator`): a flood of bad tokens is a few entries with counts, not one per request.
 * An authenticated caller's refusals are each logged: they name who.
 */
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context, MiddlewareHandler } from "hono";
import { type ErrorCategory, WritError } from "../core/errors.ts";
import type { Subject } from "../core/types.ts";
import {
  httpRefusalEntry,
  type OpenRequests,
  type RefusalLog,
  type RefusalRecorder,
  refusalReason,
} from "../decisionlog/index.ts";
import type { RequestIdVariables } from "./env.ts";
import { afterAnswer } from "./stream-end.ts";

/** The statuses whose answers are refusals to put on the record, and their category when no error says. */
const AUDITED = new Map<number, { category: ErrorCategory; message: string; fix: string }>([
  [400, { category: "invalid_argument", message: "the request was malformed", fix: "correct the request" }],
  [401, { category: "unauthenticated", message: "the caller is not signed in", fix: "sign in again" }],
  [403, { category: "forbidden", message: "the caller may not do this", fix: "use an account allowed to" }],
  [
    413,
    {
      category: "payload_too_large",
      message: "the request body is larger than the limit",
      fix: "send a smaller body",
    },
  ],
]);

export interface RequestAudit {
  log: RefusalLog & { readonly requests: OpenRequests };
  aggregator: RefusalRecorder;
  policy: { readonly revision: string | undefined };
}

/** What the entrances tell the interceptor: the request id, and the caller once verified. */
type AuditEnv = { Variables: RequestIdVariables & { subject?: Subject } };

export function auditRequests(audit: RequestAudit): MiddlewareHandler<AuditEnv> {
  return async (c, next) => {
    const requestId = c.get("requestId");
    const request = audit.log.requests.open(requestId, c.get("callerRequestId"));
    try {
      await next();
    } catch (error) {
      request.close();
      throw error;
    }
    try {
      if (!request.refusalLogged && AUDITED.has(c.res.status)) await logRefusal(audit, c, requestId);
    } finally {
      afterAnswer(c, request.close);
    }
  };
}

/** Puts a refused answer on the record: each one of a known caller, aggregated otherwise. */
async function logRefusal(audit: RequestAudit, c: Context<AuditEnv>, requestId: string): Promise<void> {
  const subject = c.get("subject") ?? null;
  const source = sourceOf(c);
  const error = refusalOf(c.error, c.res.status);
  const parts = httpRefusalEntry({
    surface: `${c.req.method} ${c.req.routePath}`,
    source,
    subject,
    error,
    requestId,
    policyRevision: audit.policy.revision ?? "none",
  });
  if (subject) await audit.log.append(parts);
  // Keyed by the route's pattern (a bounded set), never by what the caller sent.
  else {
    const reason = refusalReason(error.category, error.message);
    await audit.aggregator.record(`${source}\u0000${reason}\u0000${parts.action}`, parts);
  }
}

/** The error answered; a refusal answered without one (the body limit's 413, a form page's 400) from its status. */
function refusalOf(error: unknown, status: number): WritError {
  if (error instanceof WritError) return error;
  const known = AUDITED.get(status);
  return known === undefined
    ? WritError.from(error)
    : new WritError(known.category, known.message, { suggestedFix: known.fix });
}

/** The caller's address (the socket's peer); `unknown` off a Node server (tests' `app.request`). */
function sourceOf(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    return "unknown";
  }
}
