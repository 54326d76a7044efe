/**
 * Stages 9 and 10 with their entry: the one path that runs a call with a grant. Every entrance
 * comes here (`POST /v1/execute`, a proposal with `execute`, the MCP repeat call with an
 * approval's grant, Code Mode's inner calls), so every execution is a decision-log entry
 * (`writ/execute`), durable before the answer: what ran (a summary, never the content) or why it
 * was refused. The grant is verified and consumed (its resource still at the revision it was
 * decided on) in exactly one place: `dispatch` (09-dispatch.ts).
 */
import { decodeJwt } from "jose";
import { WritError } from "../core/errors.ts";
import type { ExecuteRequest, Gateway } from "../core/gateway.ts";
import type { CallObserver } from "../core/handlers.ts";
import type { GrantClaims, Subject } from "../core/types.ts";
import { type ExecutedGrant, type ExecutionFacts, executionEntry } from "../decisionlog/index.ts";
import { toolDiscovery } from "../discovery/index.ts";
import { parseProposal } from "../intake/index.ts";
import { type NormalizedCall, normalize, UnknownToolError } from "../normalize/index.ts";
import { type CallAttributes, stage, tracedCall } from "../observability/tracing.ts";
import type { LayeredResult } from "../results/index.ts";
import type { HistoryCount } from "../store/types.ts";
import { executionCounts } from "./05-history.ts";
import { currentRevision, logDecision } from "./08-log.ts";
import { dispatch, GrantRefusedError } from "./09-dispatch.ts";
import { result } from "./10-result.ts";

/** A call ready to run with a grant: normalized, its caller known. */
export interface GrantedCall {
  n: NormalizedCall;
  /** The tool's name as the caller called it. */
  tool: string;
  subject: Subject;
  token: string;
  /** The grant's claims when this process just issued it for this call (09-dispatch `issued`). */
  issued?: GrantClaims;
  requestId: string;
  /** The policy revision the entry is logged under (default the one loaded now). */
  policyRevision?: string;
  observer?: CallObserver;
  traced?: CallAttributes | undefined;
}

/**
 * `POST /v1/execute` (and the MCP repeat call): an authenticated caller runs a call with the
 * grant Writ issued for it. Identity, intake and normalization first (a failure is logged as the
 * execution's), then `executeGranted`.
 */
export async function executeWithGrant(
  gw: Gateway,
  req: ExecuteRequest,
): Promise<{ tool: string; result: LayeredResult }> {
  const facts: Omit<ExecutionFacts, "outcome" | "grant"> = {
    subject: req.subject ?? null,
    tool: null,
    action: null,
    resource: null,
    requestId: req.requestId,
    policyRevision: currentRevision(gw),
  };
  let granted: GrantedCall;
  let caller: Subject | undefined = req.subject;
  try {
    const subject =
      req.subject ?? (await stage("identity", undefined, () => gw.identity.verify(req.authorization))); // 3
    caller = subject;
    facts.subject = subject;
    const calls = stage("intake", undefined, () => parseProposal(req.format ?? "canonical", req.call)).calls; // 1
    const [call] = calls;
    if (call === undefined || calls.length !== 1) {
      throw new WritError("invalid_argument", "execute takes exactly one call", {
        suggestedFix: "send one call per execute request",
        effectCommitted: false,
      });
    }
    facts.tool = call.tool;
    const n = stage("normalize", undefined, () => normalize(call, gw.contracts)); // 2
    const observer = req.observer ? { observer: req.observer } : {};
    const traced = tracedCall(subject, n.action.name, undefined);
    granted = {
      n,
      tool: call.tool,
      subject,
      token: req.grant,
      requestId: req.requestId,
      traced,
      ...observer,
    };
  } catch (thrown) {
    const error = caller === undefined ? thrown : suggestedTo(gw, caller, thrown);
    await logExecution(gw, { ...facts, grant: presentedGrant(req.grant, undefined) }, undefined, {
      kind: "failed",
      error: WritError.from(error),
    });
    throw error;
  }
  return { tool: granted.tool, result: await executeGranted(gw, granted) };
}

/** Stages 9–10 for a call with its grant, and the execution's entry (what ran, or why not). */
export async function executeGranted(gw: Gateway, g: GrantedCall): Promise<LayeredResult> {
  const { n, traced } = g;
  const facts: Omit<ExecutionFacts, "outcome" | "grant"> = {
    subject: g.subject,
    tool: g.tool,
    action: n.action.name,
    resource: n.resource ?? null,
    requestId: g.requestId,
    policyRevision: g.policyRevision ?? currentRevision(gw),
  };
  let claims: GrantClaims | undefined;
  try {
    const observer = g.observer ? { observer: g.observer } : {};
    const verified = (c: GrantClaims) => {
      claims = c;
    };
    const issued = g.issued ? { issued: g.issued } : {};
    const request = {
      n,
      token: g.token,
      requestId: g.requestId,
      subject: g.subject,
      verified,
      ...issued,
      ...observer,
    };
    const d = await stage("dispatch", traced, () => dispatch(gw, request)); // 9
    claims = d.claims;
    if (traced) traced["writ.decision_id"] = claims.dec;
    const layered = await stage("result", traced, () => result(gw, n, d, g.requestId)); // 10
    const counts = await executionCounts(
      gw,
      { subject: g.subject, action: n.action, resource: n.resource },
      claims.dec,
    );
    await logExecution(
      gw,
      { ...facts, grant: presentedGrant(g.token, claims) },
      traced,
      { kind: "ran", summary: resultSummary(layered) },
      counts,
    );
    return layered;
  } catch (error) {
    const e = WritError.from(error);
    if (error instanceof GrantRefusedError) claims = error.claims;
    await logExecution(
      gw,
      { ...facts, grant: presentedGrant(g.token, claims) },
      traced,
      error instanceof GrantRefusedError
        ? { kind: "grant_refused", code: error.code, error: e }
        : { kind: "failed", error: e },
    );
    throw error;
  }
}

/** The execution's one entry. */
function logExecution(
  gw: Gateway,
  facts: Omit<ExecutionFacts, "outcome">,
  traced: CallAttributes | undefined,
  outcome: ExecutionFacts["outcome"],
  counts: { history?: readonly HistoryCount[] } = {},
): Promise<unknown> {
  return stage("log", traced, () => logDecision(gw, { ...executionEntry({ ...facts, outcome }), ...counts }));
}

/** Longest claim value copied from an unverified grant into the log. */
const UNVERIFIED_CLAIM_LIMIT = 200;

/** The grant's identity for the log: its verified claims, or what it claims (bounded). */
function presentedGrant(token: string, claims: GrantClaims | undefined): ExecutedGrant {
  if (claims) return { jti: claims.jti, decision_id: claims.dec, issued_to: claims.sub, verified: true };
  let payload: Record<string, unknown> = {};
  try {
    payload = decodeJwt(token);
  } catch {
    // not a JWT at all: nothing to record but that
  }
  const claim = (name: string) => {
    const v = payload[name];
    return typeof v === "string" ? v.slice(0, UNVERIFIED_CLAIM_LIMIT) : null;
  };
  return { jti: claim("jti"), decision_id: claim("dec"), issued_to: claim("sub"), verified: false };
}

/** What the log keeps of a result: its shape and timing, never its content. */
function resultSummary(r: LayeredResult): Record<string, unknown> {
  return {
    structured_keys: Object.keys(r.structured_content).length,
    content_items: r.content?.length ?? 0,
    artifacts: r.artifact_refs.length,
    redacted: r.redacted?.length ?? 0,
    target: r.provenance.target,
    latency_ms: r.execution_meta.latency_ms,
    attempt: r.execution_meta.attempt,
  };
}

/** An unknown tool's refusal suggesting the tools `subject` may see (discovery), never others. */
export function suggestedTo<T>(gw: Gateway, subject: Subject, error: T): T | UnknownToolError {
  if (!(error instanceof UnknownToolError)) return error;
  return error.suggesting(toolDiscovery(gw).callableNames(subject, error.call.source));
}
