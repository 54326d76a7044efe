/**
 * An upstream's `input_required` rounds (MCP 2026-07-28: a server asks its client for input —
 * an elicitation, a sampling, the roots — by answering `input_required` with `inputRequests` and
 * an opaque `requestState`, and the client retries with `inputResponses` and the state).
 *
 * For a caller that can be handed them (`CallObserver.input`: a 2026-07-28 caller of `/mcp`),
 * Writ's upstream client asks for the raw result (`allowInputRequired`) instead of fulfilling the
 * round itself, tells the caller's side the round (`asked`) and ends the call with a refusal that
 * the MCP front answers as `input_required` (src/mcp/upstream-input.ts); the caller's retry is a
 * new call through the whole pipeline (decided again, a fresh grant) that carries the caller's
 * `inputResponses` and the server's `requestState` (`continues`). For any other caller the SDK's
 * client fulfils the round through its request handlers, and with none for it the call is refused
 * with `cannotGiveInput`.
 */
import {
  type CallToolRequest,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  type RequestOptions,
  SdkError,
  SdkErrorCode,
} from "@modelcontextprotocol/client";
import { z } from "zod";
import type { ToolContract } from "../../contracts/schema.ts";
import { WritError } from "../../core/errors.ts";
import type { CallObserver } from "../../core/handlers.ts";

const inputRequiredSchema = z.object({
  resultType: z.literal("input_required"),
  inputRequests: z.record(z.string(), z.unknown()).optional(),
  requestState: z.string().optional(),
});

/** The params a call adds for the round it continues, and its request options for a caller that takes rounds. */
export function withInputRound(
  params: CallToolRequest["params"],
  options: RequestOptions,
  observer: CallObserver | undefined,
): [CallToolRequest["params"], RequestOptions] {
  const input = observer?.input;
  if (input === undefined) return [params, options];
  const continues = input.continues;
  return [
    {
      ...params,
      // What the caller can give, declared for this call (the envelope key the client would set).
      _meta: { ...params._meta, [CLIENT_CAPABILITIES_META_KEY]: input.capabilities },
      ...(continues?.inputResponses === undefined ? {} : { inputResponses: continues.inputResponses }),
      ...(continues?.requestState === undefined ? {} : { requestState: continues.requestState }),
    },
    { ...options, allowInputRequired: true },
  ];
}

/**
 * The server's complete result; an `input_required` one is told to the caller's side and ends the
 * call with the refusal that side answers as `input_required` (logged as the call's failure).
 */
export function completeResult(
  contract: ToolContract,
  server: string,
  result: CallToolResult,
  observer: CallObserver | undefined,
): CallToolResult {
  // A complete result (nearly every one) skips the schema, whose failing parse costs about 20 µs.
  if (!("resultType" in result) || result.resultType !== "input_required") return result;
  const round = inputRequiredSchema.safeParse(result);
  if (!round.success) return result;
  const inputRequests = round.data.inputRequests ?? {};
  if (observer?.input === undefined) throw cannotGiveInput(contract, server);
  observer.input.asked({ server, inputRequests, requestState: round.data.requestState });
  const asked = Object.keys(inputRequests).join(", ") || "(its state only)";
  throw new WritError(
    "backend_error",
    `${contract.name}: the MCP server ${server} asked the caller for input: ${asked}`,
    {
      suggestedFix: "answer the input requests and call again with inputResponses and the requestState",
      retryable: false,
      effectCommitted: false,
    },
  );
}

/** The upstream needs input this caller cannot give (no handler for it in Writ's client). */
export function cannotGiveInput(contract: ToolContract, server: string): WritError {
  return new WritError(
    "backend_error",
    `${contract.name}: the MCP server ${server} needs input (an elicitation, sampling or roots) this client cannot give`,
    {
      suggestedFix:
        "call the tool from an MCP 2026-07-28 client, which Writ hands the server's input requests, or from one that declares the capability the server asks for",
      retryable: false,
      effectCommitted: false,
    },
  );
}

/**
 * Whether an upstream's input round could not be given: the SDK's client has no handler for its
 * request, or the server refused to ask a client that declared no such capability (-32021).
 */
export function unfulfilledInput(error: unknown): boolean {
  return (
    (error instanceof SdkError && error.code === SdkErrorCode.CapabilityNotSupported) ||
    (error instanceof ProtocolError && error.code === ProtocolErrorCode.MissingRequiredClientCapability)
  );
}
