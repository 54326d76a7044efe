/**
 * Writ's own answer to the common `/mcp` POST: one JSON-RPC `tools/call` (or `tools/list`)
 * request, nothing unusual about it. Through the SDK, every POST builds a server and a transport,
 * connects them, and the message, checked already by body.ts, is validated three times more (the
 * transport's JSON-RPC schema, the server's request schema, its `tools/call` wrapper): measured
 * in-process, 150–270 µs of CPU a POST, against 45–60 µs here. Here the request goes straight to
 * the same handler, and the answer is the one the SDK's server sends, byte for byte:
 * `{result, jsonrpc, id}` with the result as the SDK's `CallToolResultSchema` reads it (the same
 * check, the same key order), a handler's protocol error as the SDK's server words it, with
 * Writ's error as `data`; a cancelled call answered as the endpoint answers one; a stream when
 * the call sends log messages or runs long (lazy-stream.ts).
 *
 * Everything else stays with the SDK: initialize, ping, notifications, responses, batches, a
 * request with a progress token, a task, or any `_meta` but Writ's approval id, a body whose
 * Content-Type is not JSON, an unsupported MCP-Protocol-Version (the SDK refuses both). What
 * comes before (Host and Origin, the caller's token, the strict body checks, refusal logging) is
 * the endpoint's, for both ways.
 */
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import {
  type CallToolRequest,
  type CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  type JSONRPCMessage,
  type ListToolsResult,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import type { CallObserver } from "../core/handlers.ts";
import { isRecord } from "../core/json.ts";
import type { McpBody } from "./body.ts";
import { APPROVAL_META_KEY } from "./config.ts";
import { lazyAnswer } from "./lazy-stream.ts";
import { cancelledAnswer, errorWithData } from "./messages.ts";
import type { RequestWriter } from "./methods/context.ts";

/**
 * Whether plain requests are answered here and by modern-fast-path.ts (the equivalence tests and
 * `bench/mcp.ts --sdk` turn it off to compare).
 */
let enabled = true;

/** Turns both fast paths (2025-11-25's here, 2026-07-28's) on or off for this process. */
export function useFastPath(on: boolean): void {
  enabled = on;
}

/** Whether the fast paths are on. */
export function fastPathOn(): boolean {
  return enabled;
}

/** A POST Writ answers itself. */
export type PlainRequest =
  | { method: "tools/call"; id: string | number; request: CallToolRequest }
  | { method: "tools/list"; id: string | number };

/** Whether `value` is absent or a record with no key but `keys`. */
export function onlyKeys(value: unknown, keys: readonly string[]): boolean {
  return value === undefined || (isRecord(value) && Object.keys(value).every((key) => keys.includes(key)));
}

/** The request of a POST Writ answers itself, or undefined when the SDK's server answers it. */
export function plainRequest(request: Request, body: McpBody & { ok: true }): PlainRequest | undefined {
  if (!enabled) return undefined;
  const message = body.messages;
  if (!isRecord(message) || Array.isArray(message) || !isJsonContentType(request.headers.get("content-type")))
    return undefined;
  const version = request.headers.get("mcp-protocol-version");
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  const id = message.id;
  if (typeof id !== "string" && typeof id !== "number") return undefined;
  if (message.method === "tools/call" && body.call !== undefined) {
    const params = body.call.params;
    if (!onlyKeys(params, ["name", "arguments", "_meta"]) || !onlyKeys(params._meta, [APPROVAL_META_KEY]))
      return undefined;
    return { method: "tools/call", id, request: body.call };
  }
  if (message.method === "tools/list" && onlyKeys(message.params, ["cursor"])) {
    return { method: "tools/list", id };
  }
  return undefined;
}

/** A JSON answer, as the SDK's transport writes one. */
function jsonAnswer(message: JSONRPCMessage): Response {
  return new Response(JSON.stringify(message), {
    status: 200,
    headers: { "Content-Type": "application/json" },
  });
}

/**
 * A handler's failure as the SDK's server answers it (its `Protocol` reads any thrown value so):
 * its `code` when that is a safe integer (an `McpError`'s), else Internal error, as the SDK's
 * line encodes it (`encodeCode`: the v2 SDK sends -32002 as -32602), its message, its data.
 */
export function thrownAsError(
  id: string | number,
  error: unknown,
  encodeCode: (code: number) => number = (code) => code,
): JSONRPCMessage & { error: { code: number; message: string; data?: unknown } } {
  const thrown = isRecord(error) ? error : {};
  const code =
    typeof thrown.code === "number" && Number.isSafeInteger(thrown.code)
      ? thrown.code
      : ErrorCode.InternalError;
  const message = typeof thrown.message === "string" ? thrown.message : "Internal error";
  return {
    jsonrpc: "2.0",
    id,
    error: { code: encodeCode(code), message, ...(thrown.data === undefined ? {} : { data: thrown.data }) },
  };
}

/** A handler's failure as the SDK's server answers it, Writ's error as `data` when it has none. */
function failure(id: string | number, error: unknown): JSONRPCMessage {
  return errorWithData(thrownAsError(id, error));
}

/** The answer to `tools/list`. */
export function answerList(id: string | number, list: () => ListToolsResult["tools"]): Response {
  try {
    return jsonAnswer({ result: { tools: list() }, jsonrpc: "2.0", id });
  } catch (error) {
    return jsonAnswer(failure(id, error));
  }
}

export interface CallAnswer {
  id: string | number;
  /** Whether the caller accepts a stream (an answer with log messages, or a long one, becomes one). */
  stream: boolean;
  /** Runs the call, watched by `observer`. */
  run: (observer: CallObserver) => Promise<CallToolResult>;
  /** Registers the call as cancellable; returns how to forget it once it ended. */
  cancellable: (cancel: (reason: string | undefined) => void) => () => void;
  /** How the call asks its caller an upstream's request, written on the answer (absent: not a stream). */
  ask: (write: RequestWriter, signal: AbortSignal) => NonNullable<CallObserver["request"]>;
}

/** The answer to a `tools/call` (see the module's comment). */
export async function answerCall({ id, stream, run, cancellable, ask }: CallAnswer): Promise<Response> {
  const controller = new AbortController();
  const lazy = stream ? lazyAnswer() : undefined;
  // As the SDK's server: a cancellation naming request 0 (or "") cancels nothing.
  const forget = cancellable((reason) => {
    if (id) controller.abort(reason);
  });
  const observer: CallObserver = {
    signal: controller.signal,
    log: (message) => {
      if (!controller.signal.aborted)
        lazy?.write({ method: "notifications/message", params: { ...message }, jsonrpc: "2.0" }, true);
    },
    request: ask(lazy === undefined ? undefined : (message) => lazy.write(message, true), controller.signal),
  };
  const answered = (async (): Promise<JSONRPCMessage> => {
    try {
      const result = CallToolResultSchema.safeParse(await run(observer));
      if (!result.success) {
        throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${result.error.message}`);
      }
      return { result: result.data, jsonrpc: "2.0", id };
    } catch (error) {
      return failure(id, error);
    } finally {
      forget();
    }
  })().then((message) => {
    const answer = controller.signal.aborted ? cancelledAnswer(id) : message;
    lazy?.write(answer, false);
    return jsonAnswer(answer);
  });
  if (lazy === undefined) return answered;
  // Once the answer is a stream, the JSON answer is not used.
  const response = await Promise.race([answered, lazy.opened]);
  lazy.settle();
  return response;
}
