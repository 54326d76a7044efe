/**
 * Calls proposed through the whole pipeline with `execute`: a `tools/call` (`proposeCall`), and
 * `resources/read` and `prompts/get`, as `tools/call` (their results have no `isError`: a refusal
 * is a JSON-RPC error with Writ's error in `error.data.error`); and the upstream items the lists
 * show.
 */

import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { ProtocolError } from "@modelcontextprotocol/server";
import type { WritErrorBody } from "../../core/errors.ts";
import type { Listed } from "../../discovery/index.ts";
import { type CallOutcome, handleProposal, type LayeredResult } from "../../pipeline/index.ts";
import { asErrorBody, decisionOf, explained, noResult } from "../answers.ts";
import { refuseForScopes } from "../step-up.ts";
import { approvalOf, type ProposedMessage, Refused, runApproved } from "./approved.ts";
import type { CallContext, PostContext } from "./context.ts";

/**
 * The JSON-RPC error code of a refused `resources/read` or `prompts/get` (their results have no
 * `isError`): Invalid params (-32602) for what the request itself gets wrong (invalid arguments,
 * a URI or prompt no contract governs: resource not found is -32602 by SEP-2164, which replaced
 * the -32002 the 2025-06-18 and 2025-11-25 specifications suggested), the SDK's request timeout
 * (-32001) for a timeout, Internal error (-32603) for Writ's and the server's failures, and
 * -32000 (a server error, as Writ's Host/Origin refusals) for refusals by policy, approvals and
 * conditions. `error.data.error` is Writ's error either way.
 */
function refusalCode(category: WritErrorBody["category"]): number {
  switch (category) {
    case "invalid_argument":
    case "unknown_tool":
    case "not_found":
      return ErrorCode.InvalidParams;
    case "timeout":
      return ErrorCode.RequestTimeout;
    case "internal":
    case "backend_error":
    case "backend_unavailable":
    case "tool_error":
      return ErrorCode.InternalError;
    default:
      return -32000;
  }
}

/**
 * A refused request as the SDK's server answers it: `{code, message, data}` (an `McpError` would
 * prefix its message with "MCP error <code>: ", which the caller's SDK prefixes once more).
 */
class Refusal extends Error {
  readonly code: number;
  readonly data: Record<string, unknown>;

  constructor(error: WritErrorBody, extra: Record<string, unknown>) {
    super(`${error.category}: ${error.message}`);
    this.code = refusalCode(error.category);
    this.data = { error, ...extra };
  }
}

function refusal(error: WritErrorBody, extra: Record<string, unknown>): Refusal {
  return new Refusal(error, extra);
}

/** A read or prompt that ran: its shaped result and the decision that allowed it. */
export interface Ran {
  result: LayeredResult;
  decisionId: string | undefined;
}

/**
 * A `resources/read` or `prompts/get` through the whole pipeline (or, naming an approval, with
 * the grant it released): the shaped result, or a JSON-RPC error carrying Writ's error.
 */
export function runMessage(
  ctx: PostContext,
  message: ProposedMessage,
  meta: Record<string, unknown> | undefined,
  jsonRpcId: string | number,
): Promise<Ran> {
  return refusing(async () => {
    const approvalId = approvalOf(meta);
    if (approvalId !== undefined) return runApproved({ ...ctx, observer: {} }, message, approvalId);
    return ranOf(message, await proposeMessage(ctx, message, jsonRpcId));
  });
}

/**
 * A `tools/call` through the whole pipeline (with `execute`, unless told otherwise): its one
 * outcome (a refusal for want of scopes thrown, as ../step-up.ts answers it).
 */
export async function proposeCall(
  ctx: CallContext,
  params: { name: string; arguments?: Record<string, unknown> | undefined },
  jsonRpcId: string | number,
  /** Whether it runs now (false: decided only, an allowed call's grant in the outcome). */
  execute = true,
): Promise<CallOutcome> {
  const [outcome] = await handleProposal(ctx.gw, {
    authorization: ctx.authorization,
    subject: ctx.subject,
    observer: ctx.observer,
    format: "mcp",
    payload: {
      jsonrpc: "2.0",
      id: jsonRpcId,
      method: "tools/call",
      params: {
        name: params.name,
        ...(params.arguments === undefined ? {} : { arguments: params.arguments }),
      },
    },
    ...(ctx.proposed === undefined ? {} : { proposed: ctx.proposed }),
    execute,
    requestId: ctx.requestId,
  });
  if (outcome === undefined) throw new McpError(ErrorCode.InternalError, "the call produced no decision");
  refuseForScopes(ctx, outcome);
  return outcome;
}

/** A `resources/read` or `prompts/get` through the whole pipeline with `execute`: its one outcome (as `proposeCall`). */
export async function proposeMessage(
  ctx: PostContext,
  message: ProposedMessage,
  jsonRpcId: string | number,
): Promise<CallOutcome> {
  const [outcome] = await handleProposal(ctx.gw, {
    authorization: ctx.authorization,
    subject: ctx.subject,
    format: "mcp",
    payload: { jsonrpc: "2.0", id: jsonRpcId, ...message },
    execute: true,
    requestId: ctx.requestId,
  });
  if (outcome === undefined) throw new McpError(ErrorCode.InternalError, "the request produced no decision");
  refuseForScopes(ctx, outcome);
  return outcome;
}

/** An outcome as it ran, or its refusal (thrown). */
export function ranOf(message: ProposedMessage, outcome: CallOutcome): Ran {
  const what = message.method === "resources/read" ? "read the resource" : "get the prompt";
  const extra = { ...decisionOf(outcome), ...(outcome.approval ? { approval: outcome.approval } : {}) };
  if (outcome.error) throw refusal(explained(outcome.error, outcome, what), extra);
  if (!outcome.result) throw refusal(noResult("request"), extra);
  return { result: outcome.result, decisionId: outcome.decision_id };
}

/** Runs `run`, its failures as JSON-RPC errors carrying Writ's error (protocol errors as they are). */
export async function refusing<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof McpError || error instanceof Refusal || error instanceof ProtocolError) throw error;
    if (error instanceof Refused) throw refusal(error.error, error.extra);
    throw refusal(asErrorBody(error), {});
  }
}

/** An upstream resource, template or prompt as listed to a caller: as the server described it, plus its contract. */
export function withContract<T extends { _meta?: Record<string, unknown> }>({
  item,
  contract,
}: Listed<T>): T {
  return { ...item, _meta: { ...item._meta, "writ/contract": contract } };
}
