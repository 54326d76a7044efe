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
 * A client that declares the tasks extension gets a task instead of the rounds (tasks.ts: the
 * same elicitation, answered with `tasks/update`, the call run once through `answerApproved`).
 * A modern client that declares no URL-mode elicitation gets the answer of 2025-11-25. The
 * 2025-11-25 revision keeps today's answer (the `approval_required` tool error naming the
 * approval, repeated with `_meta["writ/approval"]`): a stateless legacy POST carries no client
 * capabilities, so Writ cannot know that the client takes URL elicitations.
 */

import { type CallToolResult, McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  CLIENT_CAPABILITIES_META_KEY,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { readApproval } from "../approvals/index.ts";
import type { ApprovalView, CallOutcome } from "../core/gateway.ts";
import { isRecord } from "../core/json.ts";
import { refusalEntry } from "../decisionlog/index.ts";
import { currentRevision } from "../pipeline/08-log.ts";
import type { ApprovalRecord } from "../store/types.ts";
import { asErrorBody, fromOutcome, toolError } from "./answers.ts";
import { APPROVAL_INPUT_KEY, approvalElicitation } from "./approval-page.ts";
import { answerApproved, approvalOf, type ProposedMessage, runApproved } from "./methods/approved.ts";
import type { CallContext } from "./methods/context.ts";
import { proposeCall, proposeMessage, type Ran, ranOf, refusing, runMessage } from "./methods/proposed.ts";
import {
  mintRequestState,
  RequestStateError,
  type Round as StateRound,
  verifyRequestState,
} from "./request-state.ts";
import { callsRunCode } from "./run-code.ts";
import { callAsTask, declaresTasks } from "./tasks.ts";
import { UpstreamRounds } from "./upstream-input.ts";

export { APPROVAL_INPUT_KEY, approvalPage } from "./approval-page.ts";

/**
 * How long a state outlives its approval's expiry: a retry just after the approval expired gets
 * the `approval_expired` refusal rather than a refused state.
 */
const STATE_GRACE_MS = 10 * 60_000;

/** What a round carries besides the call (the SDK lifts the retry's fields out of the params). */
export interface Round {
  requestState?: string | undefined;
  inputResponses?: Record<string, unknown> | undefined;
  /**
   * Whether the client declared URL-mode elicitation (`clientCapabilities.elicitation.url`): the
   * SDK refuses to ask one that did not (-32021), so such a client gets the answer of 2025-11-25
   * (the `approval_required` tool error naming the approval, repeated with `writ/approval`).
   */
  elicitsUrl: boolean;
  /** Whether the client declared the tasks extension: a call not refused at once becomes a task (tasks.ts). */
  tasks?: boolean;
  /** The client capabilities the request declares (an upstream asks for input within them). */
  capabilities?: Record<string, unknown> | undefined;
}

const capabilitiesSchema = z.object({ [CLIENT_CAPABILITIES_META_KEY]: z.record(z.string(), z.unknown()) });

/**
 * The round a 2026-07-28 request is: the `requestState` it echoes (the raw string: the server
 * configures no `requestState.verify` hook, whose refusal would carry the SDK's fixed -32602
 * and not Writ's error; request-state.ts verifies it here) and its `inputResponses`.
 */
export function roundOf(ctx: ServerContext): Round {
  return roundFrom(ctx.mcpReq.requestState(), ctx.mcpReq.inputResponses, ctx.mcpReq.envelope);
}

/**
 * The round of a request whose retry fields and `_meta` envelope were lifted out of its params
 * (by the SDK's server, or by ../modern-fast-path.ts for a request that carries none).
 */
export function roundFrom(
  state: unknown,
  inputResponses: Record<string, unknown> | undefined,
  envelope: unknown,
): Round {
  const capabilities = capabilitiesSchema.safeParse(envelope).data?.[CLIENT_CAPABILITIES_META_KEY] ?? {};
  // Read from the capabilities with type guards: a schema per capability failed (with its error)
  // for every client that does not declare it, about 20 µs each.
  const elicitation = capabilities.elicitation;
  return {
    requestState: typeof state === "string" ? state : undefined,
    inputResponses,
    elicitsUrl: isRecord(elicitation) && isRecord(elicitation.url),
    tasks: declaresTasks(envelope),
    capabilities,
  };
}

/** The answer of a multi-round-trip method. */
export type RoundAnswer = CallToolResult | InputRequiredResult;

/** Whether a request is a round of the flow: not Code Mode, nor a repeat naming its approval. */
function isRound(
  ctx: CallContext,
  params: { name?: string; _meta?: Record<string, unknown> | undefined },
  round: Round,
): boolean {
  if (round.requestState !== undefined) return true;
  const runsCode = params.name !== undefined && callsRunCode(ctx.codeMode, params.name);
  return !runsCode && approvalOf(params._meta) === undefined;
}

/**
 * A `tools/call` on the 2026-07-28 revision: a first round through the pipeline (an approval it
 * needs becomes `input_required`), or a retry carrying the state of its approval round. Code
 * Mode's `run_code` and a repeat naming its approval (`_meta["writ/approval"]`) are answered as
 * on 2025-11-25, by `today`.
 */
export async function callToolRound(
  ctx: CallContext,
  params: {
    name: string;
    arguments?: Record<string, unknown> | undefined;
    _meta?: Record<string, unknown> | undefined;
  },
  jsonRpcId: string | number,
  round: Round,
  today: () => Promise<CallToolResult>,
): Promise<RoundAnswer> {
  if (!isRound(ctx, params, round)) return today();
  const message: ProposedMessage = {
    method: "tools/call",
    params: { name: params.name, arguments: params.arguments ?? {} },
  };
  // An upstream's input round reaches this caller (upstream-input.ts), and its answer goes back.
  const upstream = new UpstreamRounds(ctx, message, round.capabilities ?? {});
  try {
    if (round.tasks === true && round.requestState === undefined) {
      return await callAsTask(ctx, params, jsonRpcId, round.elicitsUrl);
    }
    return await answerRound(ctx, message, round, {
      propose: () => proposeCall(upstream.context(), params, jsonRpcId),
      answer: (outcome) => upstream.answer(outcome, fromOutcome),
      approved: (approval) => answerApproved(ctx, message, approval),
      continued: async (upstreamState) => {
        const context = upstream.context({
          inputResponses: round.inputResponses,
          requestState: upstreamState,
        });
        return upstream.answer(await proposeCall(context, params, jsonRpcId), fromOutcome);
      },
    });
  } catch (error) {
    // Protocol errors (a refused state; an unknown tool, as `fromOutcome` throws it) stay such.
    if (error instanceof ProtocolError || error instanceof McpError) throw error;
    return toolError(asErrorBody(error), {});
  }
}

/**
 * A `resources/read` or `prompts/get` on the 2026-07-28 revision, as `callToolRound`: the shaped
 * result, `input_required`, or (thrown) a JSON-RPC error carrying Writ's error. A repeat naming
 * its approval runs as on 2025-11-25.
 */
export function messageRound(
  ctx: CallContext,
  message: ProposedMessage,
  meta: Record<string, unknown> | undefined,
  jsonRpcId: string | number,
  round: Round,
): Promise<Ran | InputRequiredResult> {
  if (!isRound(ctx, { _meta: meta }, round)) return runMessage(ctx, message, meta, jsonRpcId);
  return refusing(() =>
    answerRound(ctx, message, round, {
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
  /** The call proposed again with the caller's answers to an upstream's input round (tools/call only). */
  continued?(upstreamState: string): Promise<T | InputRequiredResult>;
}

/**
 * One round of a call: a first one proposes it (an approval it waits for becomes
 * `input_required`; one approved already, the same call proposed again before its grant was
 * collected, runs now); a retry with a state is refused unless the state is valid and this
 * caller's for this call, then answered as the approval stands (run once, ask again, refuse).
 */
async function answerRound<T>(
  ctx: CallContext,
  message: ProposedMessage,
  round: Round,
  steps: RoundSteps<T>,
): Promise<T | InputRequiredResult> {
  if (round.requestState !== undefined) {
    const { approvalId, upstreamState } = await verifiedState(ctx, message, round.requestState);
    if (upstreamState !== undefined && steps.continued !== undefined) return steps.continued(upstreamState);
    if (approvalId === undefined) {
      throw await refusedState(
        ctx,
        message,
        new RequestStateError("call", "it was issued for another request"),
      );
    }
    const approval = await readApproval(ctx.gw, approvalId, ctx.subject, ctx.requestId);
    if (approval.status === "pending" && round.elicitsUrl && !declined(round.inputResponses)) {
      return approvalRound(ctx, message, approval);
    }
    // Approved: collected and run once. Pending and declined, rejected, expired: the refusal.
    return steps.approved(approval);
  }
  const outcome = await steps.propose();
  const approval = outcome.approval;
  if (outcome.error?.category !== "approval_required" || approval === undefined) return steps.answer(outcome);
  if (approval.status === "approved") return steps.approved(approval.id);
  if (!round.elicitsUrl) return steps.answer(outcome);
  return approvalRound(ctx, message, approval);
}

/** The approval's round: its page to open, who may approve it and until when, and a fresh state. */
async function approvalRound(
  ctx: CallContext,
  message: ProposedMessage,
  approval: Pick<ApprovalView, "id" | "approver_roles" | "expires_at">,
): Promise<InputRequiredResult> {
  const expiresAt = new Date(approval.expires_at);
  const requestState = await mintRequestState(
    ctx.gw,
    { subject: ctx.subject, call: message, approvalId: approval.id },
    new Date(expiresAt.getTime() + STATE_GRACE_MS),
  );
  return inputRequired({
    inputRequests: { [APPROVAL_INPUT_KEY]: approvalElicitation(ctx, approval) },
    requestState,
  });
}

/** Whether the caller's user declined or cancelled the approval's elicitation. */
function declined(responses: Record<string, unknown> | undefined): boolean {
  const answer = inputResponse(responses, APPROVAL_INPUT_KEY);
  return answer.kind === "elicit" && answer.action !== "accept";
}

/** The approval a state names; a refused state is logged, then answered -32602 with Writ's error. */
async function verifiedState(ctx: CallContext, message: ProposedMessage, state: string): Promise<StateRound> {
  try {
    return await verifyRequestState(ctx.gw, state, { subject: ctx.subject, call: message });
  } catch (error) {
    if (!(error instanceof RequestStateError)) throw error;
    throw await refusedState(ctx, message, error);
  }
}

/** A refused state, logged (`writ/intake`), as the -32602 that answers it with Writ's error. */
async function refusedState(
  ctx: CallContext,
  message: ProposedMessage,
  error: RequestStateError,
): Promise<ProtocolError> {
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
  return new ProtocolError(ProtocolErrorCode.InvalidParams, error.message, { error: error.toJSON() });
}
