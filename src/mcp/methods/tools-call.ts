/**
 * `tools/call`: the whole pipeline with `execute` (or Code Mode's `run_code`, or a repeat naming an
 * approval). Refusals the model can act on are tool execution errors (`isError: true`, the
 * structured error in `structuredContent`); an unknown tool is a protocol error. On 2025-11-25,
 * answered by fast-path.ts for a plain request, else by the per-POST v1 SDK server (`toolsCall`'s
 * `legacy` half), whose answer may become a stream of progress and log messages; on 2026-07-28,
 * through `callToolModern`, by ../modern-fast-path.ts for a plain request, else by the v2 SDK's
 * server, where a call waiting for approval becomes a round of ../approval-flow.ts.
 */
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { type InputRequiredResult, ProtocolError } from "@modelcontextprotocol/server";
import type { CallObserver } from "../../core/handlers.ts";
import { asErrorBody, fromOutcome, toolError } from "../answers.ts";
import { callToolRound, type Round, roundOf } from "../approval-flow.ts";
import { cancelledAnswer } from "../messages.ts";
import { callRunCode, callsRunCode } from "../run-code.ts";
import { answerApproved, approvalOf, type ProposedMessage } from "./approved.ts";
import type { CallContext, MethodRegistration, PostContext, RequestWriter } from "./context.ts";
import { proposeCall } from "./proposed.ts";

/** A `tools/call` (fast-path.ts's or the SDK server's) as MCP answers it. */
export async function callTool(
  ctx: CallContext,
  request: CallToolRequest,
  jsonRpcId: string | number,
): Promise<CallToolResult> {
  const params = request.params;
  const approvalId = approvalOf(params._meta);
  try {
    if (callsRunCode(ctx.codeMode, params.name)) {
      const run = { subject: ctx.subject, requestId: ctx.requestId, signal: ctx.observer.signal };
      return await callRunCode(ctx.codeMode, run, params.arguments);
    }
    if (approvalId !== undefined) {
      const message: ProposedMessage = {
        method: "tools/call",
        params: { name: params.name, arguments: params.arguments ?? {} },
      };
      return await answerApproved(ctx, message, approvalId);
    }
    return fromOutcome(await proposeCall(ctx, params, jsonRpcId));
  } catch (error) {
    // Protocol errors (an unknown tool; a refusal for want of scopes, ../step-up.ts) stay such.
    if (error instanceof McpError || error instanceof ProtocolError) throw error;
    return toolError(asErrorBody(error), {});
  }
}

/**
 * The observer of a `tools/call`: progress to the caller's token, log messages, an upstream's
 * requests to the caller (`request`, 2025-11-25 only), the SDK's cancellation (`signal`). Notifications leave in order through `notify` (the request's own, on
 * either SDK line); `flushed()` resolves once all sent have left, so that none is overtaken by the
 * answer (which closes the stream).
 */
export function observerOf(
  token: string | number | undefined,
  signal: AbortSignal,
  notify: (notification: { method: string; params: Record<string, unknown> }) => Promise<void>,
  request?: CallObserver["request"],
): CallObserver & { flushed(): Promise<void> } {
  let queue = Promise.resolve();
  const send = (notification: { method: string; params: Record<string, unknown> }) => {
    queue = queue.then(() => notify(notification)).catch(() => undefined);
  };
  return {
    signal,
    ...(token === undefined
      ? {}
      : {
          progress: (update) =>
            send({ method: "notifications/progress", params: { progressToken: token, ...update } }),
        }),
    log: (message) => send({ method: "notifications/message", params: { ...message } }),
    ...(request === undefined ? {} : { request }),
    flushed: () => queue,
  };
}

/** A 2026-07-28 `tools/call` as it reached Writ: its id, its round, and its caller's channel. */
export interface ModernCall {
  id: string | number;
  round: Round;
  /** Aborted when the exchange ends before the answer (the caller went away). */
  signal: AbortSignal;
  /** Sends a notification to the caller, on this call's answer. */
  notify: (notification: { method: string; params: Record<string, unknown> }) => Promise<void>;
}

/**
 * The 2026-07-28 answer to a `tools/call` (on the v2 SDK's server, one per request, or on
 * ../modern-fast-path.ts's for a plain one): a round of the approval flow (../approval-flow.ts:
 * a call that needs approval becomes `input_required`, its retry carries the state), else
 * `callTool`, watched through the request's own channel (its progress token, notifications and
 * signal). The one place a modern `tools/call` is answered.
 */
export async function callToolModern(
  post: PostContext,
  request: CallToolRequest,
  { id, round, signal, notify }: ModernCall,
): Promise<CallToolResult | InputRequiredResult> {
  const observer = observerOf(request.params._meta?.progressToken, signal, notify);
  const call = { ...post, observer };
  const answer = await callToolRound(call, request.params, id, round, () => callTool(call, request, id));
  await observer.flushed();
  return answer;
}

/**
 * `tools/call` on the SDK's server. On 2025-11-25: cancellable from another POST (handed to this
 * server as the SDK's own `notifications/cancelled`), its notifications flushed before its answer.
 */
export const toolsCall: MethodRegistration = {
  legacy: (post) => {
    const { server, transport, cancellable, subject } = post;
    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      post.tracked(async () => {
        const forget = cancellable.add(subject, extra.requestId, (reason) => {
          void transport.onmessage?.({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: extra.requestId, ...(reason === undefined ? {} : { reason }) },
          });
        });
        try {
          const write: RequestWriter = post.stream
            ? (message) =>
                void transport.send(message, { relatedRequestId: extra.requestId }).catch(() => undefined)
            : undefined;
          const observer = observerOf(
            request.params._meta?.progressToken,
            extra.signal,
            extra.sendNotification,
            post.askCaller?.(post, write, extra.signal),
          );
          const answer = await callTool({ ...post, observer }, request, extra.requestId);
          await observer.flushed();
          return answer;
        } finally {
          forget();
          // The SDK sends nothing for a cancelled request, but an HTTP request needs an end.
          if (extra.signal.aborted)
            void transport.send(cancelledAnswer(extra.requestId)).catch(() => undefined);
        }
      }),
    );
  },
  modern: (post) => {
    post.server.setRequestHandler("tools/call", (request, ctx) =>
      callToolModern(post, request, {
        id: ctx.mcpReq.id,
        round: roundOf(ctx),
        signal: ctx.mcpReq.signal,
        notify: ctx.mcpReq.notify,
      }),
    );
  },
};
