/**
 * Approvals in the protocol (2026-07-28): a `tools/call` the policy answers `require_approval`
 * is answered `input_required`, with a URL-mode elicitation whose URL is the approval's page in
 * Writ's console (the message says who may approve it, and until when) and a `requestState`
 * bound to the caller, the call and the approval (request-state.ts). The client fulfils the
 * elicitation (its user has someone approve the call) and retries the call with the state:
 *
 * - approved: the grant is collected and the call runs once (`answerApproved`, the path of the
 *   `_meta["writ/approval"]` repeat); another retry with the same state finds the grant spent
 *   and gets its refusal (`policy_denied`, the grant replayed: the call never runs twice);
 * - still pending: `input_required` again (the same approval, a fresh state), unless the user
 *   declined or cancelled the elicitation, which ends the round with the `approval_required`
 *   refusal (the approval stays open: calling again later picks it up);
 * - rejected or expired: the structured refusal, as the repeat gets it;
 * - a state that is not valid, has expired, or is another caller's or another call's: a JSON-RPC
 *   error -32602 with Writ's error as its data, logged (`writ/intake`).
 *
 * The 2025-11-25 revision keeps today's answer (the `approval_required` tool error naming the
 * approval, repeated with `_meta["writ/approval"]`): a stateless legacy POST carries no client
 * capabilities, so Writ cannot know that the client takes URL elicitations.
 */

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
} from "@modelcontextprotocol/server";
import { readApproval } from "../approvals/index.ts";
import { CONSOLE_PATH } from "../console/session.ts";
import type { ApprovalView, CallOutcome } from "../core/gateway.ts";
import { refusalEntry } from "../decisionlog/index.ts";
import { currentRevision } from "../pipeline/08-log.ts";
import type { ApprovalRecord } from "../store/types.ts";
import { asErrorBody, fromOutcome, toolError } from "./answers.ts";
import { answerApproved, type ProposedMessage, runApproved } from "./methods/approved.ts";
import type { CallContext } from "./methods/context.ts";
import { proposeMessage, type Ran, ranOf, refusing } from "./methods/proposed.ts";
import { proposeCall } from "./methods/tools-call.ts";
import { mintRequestState, RequestStateError, verifyRequestState } from "./request-state.ts";
import { mcpResourceUrl } from "./resource-metadata.ts";

/** The key of the approval's elicitation in `inputRequests` (and of its answer in `inputResponses`). */
export const APPROVAL_INPUT_KEY = "writ_approval";
/**
 * How long a state outlives its approval's expiry: a retry just after the approval expired gets
 * the `approval_expired` refusal rather than a refused state.
 */
const STATE_GRACE_MS = 10 * 60_000;

/** A call on the 2026-07-28 revision: the call's context and the URL its POST arrived at. */
export interface FlowContext extends CallContext {
  /** The URL the request arrived at (the console's address is taken from `mcp.resource`, else from it). */
  requestUrl: string;
}

/** What a retried round carries besides the call (the SDK lifts both out of the params). */
export interface Round {
  requestState?: string | undefined;
  inputResponses?: Record<string, unknown> | undefined;
}

/** The answer of a multi-round-trip method. */
export type RoundAnswer = CallToolResult | InputRequiredResult;

/**
 * A `tools/call` on the 2026-07-28 revision: a first round through the pipeline (an approval it
 * needs becomes `input_required`), or a retry carrying the state of its approval round.
 */
export async function callToolRound(
  ctx: FlowContext,
  params: { name: string; arguments?: Record<string, unknown> | undefined },
  jsonRpcId: string | number,
  round: Round,
): Promise<RoundAnswer> {
  const message: ProposedMessage = {
    method: "tools/call",
    params: { name: params.name, arguments: params.arguments ?? {} },
  };
  try {
    return await roundOf(ctx, message, round, {
      propose: () => proposeCall(ctx, params, jsonRpcId),
      answer: fromOutcome,
      approved: (approval) => answerApproved(ctx, message, approval),
    });
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    return toolError(asErrorBody(error), {});
  }
}

/**
 * A `resources/read` or `prompts/get` on the 2026-07-28 revision, as `callToolRound`: the shaped
 * result, `input_required`, or (thrown) a JSON-RPC error carrying Writ's error.
 */
export function messageRound(
  ctx: FlowContext,
  message: ProposedMessage,
  jsonRpcId: string | number,
  round: Round,
): Promise<Ran | InputRequiredResult> {
  return refusing(() =>
    roundOf(ctx, message, round, {
      propose: () => proposeMessage(ctx, message, jsonRpcId),
      answer: (outcome) => ranOf(message, outcome),
      approved: (approval) => runApproved(ctx, message, approval),
    }),
  );
}

/** How a method proposes a call, answers its outcome, and runs it with an approval's grant. */
interface RoundSteps<T> {
  propose(): Promise<CallOutcome>;
  /** An outcome that waits for no approval, as the method answers it today. */
  answer(outcome: CallOutcome): T | Promise<T>;
  /** The call run with an approval's grant, or the approval's refusal (pending, rejected, expired). */
  approved(approval: string | ApprovalRecord): Promise<T>;
}

/**
 * One round of a call: a first one proposes it (an approval it waits for becomes
 * `input_required`; one approved already, the same call proposed again before its grant was
 * collected, runs now); a retry with a state is refused unless the state is valid and this
 * caller's for this call, then answered as the approval stands (run once, ask again, refuse).
 */
async function roundOf<T>(
  ctx: FlowContext,
  message: ProposedMessage,
  round: Round,
  steps: RoundSteps<T>,
): Promise<T | InputRequiredResult> {
  if (round.requestState !== undefined) {
    const { approvalId } = await verifiedState(ctx, message, round.requestState);
    const approval = await readApproval(ctx.gw, approvalId, ctx.subject, ctx.requestId);
    if (approval.status === "pending" && !declined(round.inputResponses)) {
      return approvalRound(ctx, message, approval);
    }
    // Approved: collected and run once. Pending and declined, rejected, expired: the refusal.
    return steps.approved(approval);
  }
  const outcome = await steps.propose();
  const approval = outcome.approval;
  if (outcome.error?.category !== "approval_required" || approval === undefined) return steps.answer(outcome);
  if (approval.status === "approved") return steps.approved(approval.id);
  return approvalRound(ctx, message, approval);
}

/** The approval's round: its page to open, who may approve it and until when, and a fresh state. */
async function approvalRound(
  ctx: FlowContext,
  message: ProposedMessage,
  approval: Pick<ApprovalView, "id" | "approver_roles" | "expires_at">,
): Promise<InputRequiredResult> {
  const expiresAt = new Date(approval.expires_at);
  const requestState = await mintRequestState(
    ctx.gw,
    { subject: ctx.subject, call: message, approvalId: approval.id },
    new Date(expiresAt.getTime() + STATE_GRACE_MS),
  );
  const roles =
    approval.approver_roles.length === 0 ? "(none: it can only expire)" : approval.approver_roles.join(", ");
  return inputRequired({
    inputRequests: {
      [APPROVAL_INPUT_KEY]: inputRequired.elicitUrl({
        message: `Writ needs a person's approval before this call runs: ask someone with one of the roles ${roles} to approve request ${approval.id} on this page before ${approval.expires_at}. The call continues once it is decided.`,
        url: approvalPage(ctx, approval.id),
      }),
    },
    requestState,
  });
}

/** The approval's page in the console, at the gateway's public address (`mcp.resource`'s origin, else the request's). */
export function approvalPage(ctx: Pick<FlowContext, "gw" | "requestUrl">, approvalId: string): string {
  const base = mcpResourceUrl(ctx.requestUrl, ctx.gw.identity.protectedResource);
  return new URL(`${CONSOLE_PATH}/approvals#approval-${encodeURIComponent(approvalId)}`, base).href;
}

/** Whether the caller's user declined or cancelled the approval's elicitation. */
function declined(responses: Record<string, unknown> | undefined): boolean {
  const answer = inputResponse(responses, APPROVAL_INPUT_KEY);
  return answer.kind === "elicit" && answer.action !== "accept";
}

/** The approval a state names; a refused state is logged, then answered -32602 with Writ's error. */
async function verifiedState(
  ctx: FlowContext,
  message: ProposedMessage,
  state: string,
): Promise<{ approvalId: string }> {
  try {
    return await verifyRequestState(ctx.gw, state, { subject: ctx.subject, call: message });
  } catch (error) {
    if (!(error instanceof RequestStateError)) throw error;
    await ctx.gw.log.append(
      refusalEntry({
        input: { method: message.method, params: message.params, request_state: { refused: error.reason } },
        policyRevision: currentRevision(ctx.gw),
        subject: ctx.subject,
        action: null,
        resource: null,
        error,
        requestId: ctx.requestId,
      }),
    );
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message, { error: error.toJSON() });
  }
}
