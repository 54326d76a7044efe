/**
 * An upstream server's `input_required` rounds, forwarded to a 2026-07-28 caller of `/mcp` and
 * back (the dispatch side is src/dispatch/mcp/input-required.ts). A `tools/call` whose upstream
 * (a 2026-07-28 server) answers `input_required` is answered `input_required` with the server's
 * `inputRequests` as they came and a Writ `requestState` (request-state.ts: signed with the grant
 * keys, bound to the caller, the call's digest, and carrying the server's own state). The caller's
 * retry (its `inputResponses` and Writ's state) is verified, then decided by the policy again
 * through the whole pipeline (a fresh grant, its own log entries), and sent upstream with the
 * server's state and the caller's responses: each round is a call of its own in the decision log.
 * A state for another caller or call is refused -32602 (approval-flow.ts). Only `tools/call`
 * forwards rounds; Code Mode's inner calls and the other entrances cannot give input, and such a
 * call is refused with `cannotGiveInput` when Writ's upstream client has no handler for it.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  type InputRequest,
  type InputRequests,
  type InputRequiredResult,
  inputRequired,
  isSpecType,
} from "@modelcontextprotocol/server";
import { WritError } from "../core/errors.ts";
import type { CallOutcome } from "../core/gateway.ts";
import type { UpstreamInput, UpstreamInputRound } from "../core/handlers.ts";
import { nowOf } from "../pipeline/06-approval.ts";
import type { ProposedMessage } from "./methods/approved.ts";
import type { CallContext } from "./methods/context.ts";
import { MAX_UPSTREAM_STATE_LENGTH, mintRequestState } from "./request-state.ts";

/** How long the caller has to answer an upstream's round. */
const ROUND_TTL_MS = 10 * 60_000;

/** One `tools/call`'s rounds with its upstream: what the server asked, for the answer. */
export class UpstreamRounds {
  #asked: UpstreamInputRound | undefined;

  constructor(
    private readonly ctx: CallContext,
    private readonly message: ProposedMessage,
    /** The caller's declared client capabilities (its request's envelope). */
    private readonly capabilities: Record<string, unknown>,
  ) {}

  /** The call's context, its observer taking the server's next round (and carrying the one it answers). */
  context(continues?: UpstreamInput["continues"]): CallContext {
    const input: UpstreamInput = {
      capabilities: this.capabilities,
      ...(continues === undefined ? {} : { continues }),
      asked: (round) => {
        this.#asked = round;
      },
    };
    return { ...this.ctx, observer: { ...this.ctx.observer, input } };
  }

  /** `input_required` when the server asked for input; else the outcome as `answer` makes it. */
  async answer(
    outcome: CallOutcome,
    answer: (outcome: CallOutcome) => CallToolResult,
  ): Promise<CallToolResult | InputRequiredResult> {
    const asked = this.#asked;
    if (asked === undefined) return answer(outcome);
    const upstreamState = asked.requestState ?? "";
    const inputRequests = inputRequestsOf(asked.inputRequests);
    if (upstreamState.length > MAX_UPSTREAM_STATE_LENGTH || inputRequests === undefined) {
      throw new WritError(
        "backend_error",
        `the MCP server ${asked.server} asked for input Writ cannot forward (input requests that are not MCP's, or a requestState over ${MAX_UPSTREAM_STATE_LENGTH} characters)`,
        { suggestedFix: "tell the server's operator", effectCommitted: false },
      );
    }
    const requestState = await mintRequestState(
      this.ctx.gw,
      { subject: this.ctx.subject, call: this.message, upstreamState },
      new Date(nowOf(this.ctx.gw).getTime() + ROUND_TTL_MS),
    );
    return inputRequired({ ...(inputRequests === null ? {} : { inputRequests }), requestState });
  }
}

/** The server's input requests as MCP defines them (null for none); undefined when one is not. */
function inputRequestsOf(requests: Record<string, unknown>): InputRequests | null | undefined {
  const entries = Object.entries(requests);
  if (entries.length === 0) return null;
  const checked: Record<string, InputRequest> = {};
  for (const [key, request] of entries) {
    if (
      isSpecType.ElicitRequest(request) ||
      isSpecType.CreateMessageRequest(request) ||
      isSpecType.ListRootsRequest(request)
    ) {
      checked[key] = request;
    } else {
      return undefined;
    }
  }
  return checked;
}
