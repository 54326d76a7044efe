/**
 * Stage 3, identity: the caller's bearer JWT to a subject, once per request. A refused token
 * refuses every call, and each refused call is logged.
 */
import { WritError } from "../core/errors.ts";
import type { Gateway, ProposalRequest } from "../core/gateway.ts";
import type { ProposedCall, Subject } from "../core/types.ts";
import { refusalEntry, refusalReason } from "../decisionlog/index.ts";
import type { NormalizedCall } from "../normalize/index.ts";
import { type IntakeRequest, intake } from "./01-intake.ts";
import { normalizeCalls } from "./02-normalize.ts";
import { currentRevision, logRequestRefusal } from "./08-log.ts";

export async function identify(
  gw: Gateway,
  req: Pick<ProposalRequest, "authorization" | "subject" | "session" | "requestId">,
  calls: readonly ProposedCall[],
  normalized: ReadonlyArray<NormalizedCall | WritError>,
): Promise<Subject> {
  if (req.subject) return req.subject;
  try {
    return await gw.identity.verify(req.authorization);
  } catch (error) {
    const e = WritError.from(error);
    await logUnauthenticated(gw, req, calls, normalized, e);
    throw e;
  }
}

/** Logs each call of a request whose caller could not be authenticated. */
async function logUnauthenticated(
  gw: Gateway,
  req: Pick<ProposalRequest, "session" | "requestId">,
  calls: readonly ProposedCall[],
  normalized: ReadonlyArray<NormalizedCall | WritError>,
  error: WritError,
): Promise<void> {
  for (const [i, call] of calls.entries()) {
    const n = normalized[i];
    const ok = n !== undefined && !(n instanceof WritError);
    const parts = refusalEntry({
      input: { tool: call.tool, source: call.source, session: req.session ?? null },
      policyRevision: currentRevision(gw),
      subject: null,
      action: ok ? n.action.name : null,
      resource: ok ? (n.resource ?? null) : null,
      error,
      requestId: req.requestId,
    });
    // A flood of identical refusals (by the reason's shape, format and action, never what the
    // caller sent verbatim) is aggregated; nothing is lost, the counts add up.
    if (gw.refusals) {
      gw.metrics.decisions.inc({ decision: "error" });
      const reason = refusalReason(error.category, error.message);
      await gw.refusals.record(`identity\u0000${reason}\u0000${call.source}\u0000${parts.action}`, parts);
    } else {
      await logRequestRefusal(gw, parts);
    }
  }
}

/**
 * The one path that logs a request refused for want of a valid identity, when the refusal was
 * decided elsewhere (the MCP endpoint authenticates before it reads the calls): the calls are
 * read and logged exactly as the identity stage logs them; nothing is decided or run again.
 */
export async function logRefusedRequest(gw: Gateway, req: IntakeRequest, error: unknown): Promise<void> {
  let calls: ProposedCall[];
  try {
    calls = await intake(gw, req);
  } catch {
    return; // a malformed payload: intake logged it
  }
  await logUnauthenticated(gw, req, calls, normalizeCalls(gw.contracts, calls), WritError.from(error));
}
