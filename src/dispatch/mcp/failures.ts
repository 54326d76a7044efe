/**
 * How an upstream MCP request failed, as the WritError the caller sees: whether it may be retried
 * and whether its effect may have happened, the server's message quoted with secrets scrubbed.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
} from "@modelcontextprotocol/client";
import type { ToolContract } from "../../contracts/schema.ts";
import { errorMessage, WritError } from "../../core/errors.ts";
import { scrubString } from "../../decisionlog/detectors.ts";
import { cannotGiveInput, unfulfilledInput } from "./input-required.ts";

/** The server no longer knows Writ's session (HTTP 404 on a 2025 connection): it did not run the call. */
export function isSessionLost(error: unknown): boolean {
  return error instanceof SdkHttpError && error.status === 404;
}

/** The server answered (with a JSON-RPC error) or is merely slow: the connection is still good. */
export function answered(error: unknown): boolean {
  return (
    error instanceof ProtocolError ||
    (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
  );
}

export function wrongKind(contract: ToolContract, kind: string): WritError {
  return new WritError("internal", `${contract.name} has a ${contract.backend.kind} backend, not ${kind}`, {
    suggestedFix: "dispatch this contract with the dispatcher for its backend kind",
    retryable: false,
  });
}

/** The caller cancelled the call (MCP `notifications/cancelled`); the server was told so. */
export function cancelled(contract: ToolContract, server: string): WritError {
  const effectful = contract.side_effect !== "none";
  return new WritError(
    "timeout",
    `${contract.name}: the caller cancelled the call on the MCP server ${server}`,
    {
      suggestedFix: effectful
        ? "check with the backend whether the call took effect before asking again"
        : "call again if you still need the result",
      retryable: !effectful,
      effectCommitted: effectful ? "unknown" : false,
    },
  );
}

/** An upstream's message as quoted in an error: secrets scrubbed, at most 300 characters. */
export function quoted(message: string): string {
  return scrubString(message).slice(0, 300);
}

export function callFailure(contract: ToolContract, server: string, error: unknown): WritError {
  const effectful = contract.side_effect !== "none";
  if (unfulfilledInput(error)) return cannotGiveInput(contract, server);
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
    return new WritError(
      "timeout",
      `${contract.name}: the MCP server ${server} did not answer within ${contract.timeout_ms} ms`,
      {
        suggestedFix: effectful
          ? "check with the backend whether the call took effect before asking again"
          : "retry the call later",
        retryable: !effectful,
        effectCommitted: effectful ? "unknown" : false,
      },
    );
  }
  // A resource the server does not have: -32002 from a 2025 server, -32602 (2026-07-28's
  // resources/read, whose one parameter is the URI) from one on the v2 SDK.
  const resourceMissing =
    error instanceof ProtocolError &&
    (error.code === ProtocolErrorCode.ResourceNotFound ||
      (error.code === ProtocolErrorCode.InvalidParams && contract.backend.kind === "mcp_resource"));
  if (error instanceof ProtocolError && error.code === ProtocolErrorCode.InvalidParams && !resourceMissing) {
    // The server refused the arguments before running the tool.
    return new WritError(
      "invalid_argument",
      `${contract.name}: the MCP server ${server} refused the arguments: ${quoted(error.message)}`,
      {
        suggestedFix:
          "change the arguments as the message says; if they match the tool's input schema, tell the operator that the contract and the server's tool disagree",
        retryable: false,
        effectCommitted: false,
      },
    );
  }
  if (error instanceof ProtocolError && resourceMissing) {
    return new WritError(
      "not_found",
      `${contract.name}: the MCP server ${server} has no such resource: ${quoted(error.message)}`,
      {
        suggestedFix: "read a resource that resources/list or resources/templates/list shows",
        retryable: false,
        effectCommitted: false,
      },
    );
  }
  if (error instanceof ProtocolError && error.code === ProtocolErrorCode.MethodNotFound) {
    return new WritError(
      "backend_error",
      `${contract.name}: the MCP server ${server} does not offer this call: ${quoted(error.message)}`,
      {
        suggestedFix:
          "tell the operator: the contract's backend names a tool, resource or prompt the server does not have",
        retryable: false,
        effectCommitted: false,
      },
    );
  }
  if (error instanceof ProtocolError) {
    // Any other protocol error: the server failed while handling the call.
    return new WritError(
      "backend_error",
      `${contract.name}: the MCP server ${server} failed (JSON-RPC error ${error.code}): ${quoted(error.message)}`,
      {
        suggestedFix: effectful
          ? "check with the backend whether the call took effect before asking again; if it persists, tell the server's operator"
          : "retry later; if it persists, tell the server's operator",
        retryable: !effectful,
        effectCommitted: effectful ? "unknown" : false,
      },
    );
  }
  return new WritError(
    "backend_unavailable",
    `${contract.name}: the connection to the MCP server ${server} failed: ${quoted(errorMessage(error))}`,
    {
      suggestedFix: effectful
        ? "check with the backend whether the call took effect before asking again"
        : "retry later",
      retryable: !effectful,
      effectCommitted: effectful ? "unknown" : false,
      cause: error,
    },
  );
}
