/**
 * JSON-RPC messages both ways of answering `/mcp` send (the SDK's server, and Writ's own answer of
 * a plain call in fast-path.ts): the answer to a cancelled call, and Writ's error as `data` of a
 * JSON-RPC error the SDK answers by itself.
 */
import { ErrorCode, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { WritError, type WritErrorBody } from "../core/errors.ts";

/**
 * The answer to a cancelled request. MCP says a cancelled request gets none, but its POST must
 * end: the client, which cancelled it, ignores this (-32800 is JSON-RPC's "request cancelled").
 */
export function cancelledAnswer(id: string | number): JSONRPCMessage {
  const error = new WritError("timeout", "the caller cancelled the request", {
    suggestedFix: "send the request again if you still need its answer",
    effectCommitted: "unknown",
  });
  return { jsonrpc: "2.0", id, error: { code: -32800, message: error.message, data: error.toJSON() } };
}

const OFFERED_METHODS =
  "initialize, ping, tools/list, tools/call, resources/list, resources/templates/list, resources/read, prompts/list, prompts/get, logging/setLevel";

/** Writ's error for a JSON-RPC error the SDK answered by itself (it carries no data). */
export function sdkErrorData(code: number, message: string): WritErrorBody {
  if (code === ErrorCode.MethodNotFound) {
    return new WritError("not_found", `this MCP endpoint does not offer that method (${message})`, {
      suggestedFix: `use one of the methods Writ's MCP endpoint offers: ${OFFERED_METHODS}`,
    }).toJSON();
  }
  if (code === ErrorCode.InternalError) {
    return new WritError("internal", message, {
      suggestedFix: "retry later; if it persists, tell the operator the time of the request",
    }).toJSON();
  }
  return new WritError("invalid_argument", message, {
    suggestedFix: /protocol version/i.test(message)
      ? "send an MCP-Protocol-Version this server supports (initialize negotiates one)"
      : /media type|content-type/i.test(message)
        ? "send the body as JSON with Content-Type: application/json"
        : "send one JSON-RPC 2.0 message per POST, as the MCP specification's Streamable HTTP transport defines",
  }).toJSON();
}

/** A JSON-RPC error the SDK answered by itself (it has no data) with Writ's error as its data. */
export function errorWithData(message: JSONRPCMessage): JSONRPCMessage {
  if (!("error" in message) || message.error.data !== undefined) return message;
  const { code, message: said } = message.error;
  return { ...message, error: { ...message.error, data: sdkErrorData(code, said) } };
}
