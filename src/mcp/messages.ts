/**
 * JSON-RPC messages both ways of answering `/mcp` send (the SDK's server, and Writ's own answer of
 * a plain call in fast-path.ts): the answer to a cancelled call, and Writ's error as `data` of a
 * JSON-RPC error the SDK answers by itself.
 */
import { ErrorCode, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { WritError, type WritErrorBody } from "../core/errors.ts";
import { isRecord } from "../core/json.ts";

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
  "initialize, ping, tools/list, tools/call, resources/list, resources/templates/list, resources/read, prompts/list, prompts/get, completion/complete, logging/setLevel, and with sessions on resources/subscribe and resources/unsubscribe (2025-11-25); server/discover, subscriptions/listen, tasks/get, tasks/update, tasks/cancel (the tasks extension) and the same methods without initialize, ping and logging/setLevel (2026-07-28)";

/** The 2026-07-28 revision's errors of the request's headers and envelope (SEP-2243, SEP-2575). */
export const HEADER_MISMATCH = -32020;
const MISSING_CLIENT_CAPABILITY = -32021;
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

function invalidArgumentFix(code: number, message: string): string {
  if (code === HEADER_MISMATCH)
    return "send MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* headers that agree with the body and its _meta (the body decides; an MCP client library sets them)";
  if (code === UNSUPPORTED_PROTOCOL_VERSION)
    return 'name a revision listed in error.data.supported in _meta["io.modelcontextprotocol/protocolVersion"], or connect with initialize for 2025-11-25';
  if (code === MISSING_CLIENT_CAPABILITY)
    return "declare the client capabilities error.data names in _meta, or do not call this method";
  if (/protocol version/i.test(message))
    return "send an MCP-Protocol-Version this server supports (initialize negotiates one)";
  if (/media type|content-type/i.test(message))
    return "send the body as JSON with Content-Type: application/json";
  return "send one JSON-RPC 2.0 message per POST, as the MCP specification's Streamable HTTP transport defines";
}

/** Writ's error for a JSON-RPC error of `code` that carries none (the SDK's own, or the ladder's). */
export function protocolError(code: number, message: string): WritError {
  if (code === ErrorCode.MethodNotFound) {
    return new WritError("not_found", `this MCP endpoint does not offer that method (${message})`, {
      suggestedFix: `use one of the methods Writ's MCP endpoint offers: ${OFFERED_METHODS}`,
    });
  }
  if (code === ErrorCode.InternalError) {
    return new WritError("internal", message, {
      suggestedFix: "retry later; if it persists, tell the operator the time of the request",
    });
  }
  return new WritError("invalid_argument", message, { suggestedFix: invalidArgumentFix(code, message) });
}

/** Writ's error for a JSON-RPC error the SDK answered by itself (it carries no Writ error). */
export function sdkErrorData(code: number, message: string): WritErrorBody {
  return protocolError(code, message).toJSON();
}

/** Whether a JSON-RPC error's data is (or carries, as `error`) Writ's structured error. */
function carriesWritError(data: unknown): boolean {
  return isRecord(data) && (typeof data.category === "string" || isRecord(data.error));
}

/**
 * The data of a JSON-RPC error the SDK answered by itself: Writ's error, with what the SDK put in
 * `data` kept beside it (the 2026-07-28 revision's `supported` and `requested` versions of -32022,
 * the `mismatch` of -32020, which clients read). Undefined when it carries Writ's error already.
 */
function enrichedData(code: number, message: string, data: unknown): Record<string, unknown> | undefined {
  if (carriesWritError(data)) return undefined;
  return { ...sdkErrorData(code, message), ...(isRecord(data) ? data : {}) };
}

interface JsonRpcErrorLike {
  error: { code: number; message: string; data?: unknown };
}

/**
 * A JSON-RPC error the SDK answered by itself with Writ's error as its data (any other message as
 * it is); for the messages of either SDK line (2025-11-25 on v1, 2026-07-28 on v2).
 */
export function errorWithData<M extends object>(message: M): M {
  if (!("error" in message) || !isErrorObject(message.error)) return message;
  const { code, message: said, data } = message.error;
  const enriched = enrichedData(code, said, data);
  if (enriched === undefined) return message;
  const error: JsonRpcErrorLike["error"] = { ...message.error, data: enriched };
  return Object.assign({}, message, { error });
}

function isErrorObject(value: unknown): value is JsonRpcErrorLike["error"] {
  return isRecord(value) && typeof value.code === "number" && typeof value.message === "string";
}

/**
 * An answer the SDK wrote without sending messages through its server (a transport's or an HTTP
 * entry's own refusal: an unsupported protocol version or media type, a header mismatch; statuses
 * of 400 and up) with Writ's error as the data of each JSON-RPC error. Streams and successful
 * answers, whose messages went through `errorWithData` on the way out, pass as they are, unless
 * `inBand`: an entry whose JSON answers are refusals sent with status 200 (a refused listen).
 */
export async function withErrorData(response: Response, inBand = false): Promise<Response> {
  const json = response.headers.get("content-type")?.includes("application/json") === true;
  if (!json || (response.status < 300 && !inBand)) return response;
  const text = await response.text();
  let body: unknown;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  let changed = false;
  const enrich = (message: unknown): unknown => {
    if (!isRecord(message)) return message;
    const enriched = errorWithData(message);
    if (enriched !== message) changed = true;
    return enriched;
  };
  const enriched = Array.isArray(body) ? body.map(enrich) : enrich(body);
  return new Response(changed ? JSON.stringify(enriched) : text, {
    status: response.status,
    headers: response.headers,
  });
}
