/**
 * Server-to-client requests from an upstream MCP server (`sampling/createMessage`,
 * `elicitation/create` in form and URL mode, `roots/list`): Writ's client declares the three
 * capabilities and hands each request to the caller of the call it came with, through the call's
 * `CallObserver.request` (the `/mcp` front asks the policy, then the caller; src/mcp/server-requests.ts),
 * and the caller's answer back to the server.
 *
 * Which call a request came with: MCP gives a request no field naming it (over Streamable HTTP
 * only the stream it arrives on does, which the SDK's client transport does not tell; over stdio
 * nothing does), so, as for log messages, a request reaches a caller only while its call is the
 * only one running on that server. Otherwise (none, or several at once), and when the caller
 * cannot take requests (a 2026-07-28 caller, an HTTP API caller, a caller reading JSON only), the
 * server is answered -32601 at once, as by a client without the capability: never left waiting.
 * A policy's refusal is -1, as the specification words a user's rejection of a sampling request.
 *
 * The SDK's client also hands a 2026-07-28 server's `input_required` requests (the same three
 * methods, embedded in a result) to these handlers, so they reach a 2025-11-25 caller the same way.
 */
import {
  type Client,
  type ClientCapabilities,
  type ClientContext,
  type CreateMessageResult,
  type ElicitResult,
  type ListRootsResult,
  ProtocolError,
  ProtocolErrorCode,
  type StandardSchemaV1Sync,
  specTypeSchemas,
} from "@modelcontextprotocol/client";
import { WritError } from "../../core/errors.ts";
import type { CallObserver, ClientAnswer, ClientRequest, ClientRequestMethod } from "../../core/handlers.ts";
import { quoted } from "./failures.ts";

/** A call running on an upstream server: who watches it, and its contract. */
export interface RunningCall {
  observer: CallObserver | undefined;
  contract: string;
}

/** What Writ's client declares to every upstream server: it forwards the three requests. */
export const FORWARDED_CAPABILITIES: ClientCapabilities = {
  sampling: {},
  elicitation: { form: {}, url: {} },
  roots: {},
};

/** A policy's refusal, as the specification words a user's rejection of a sampling request. */
const REJECTED = -1;

/** Registers the three handlers on `client`, for `server`, whose running calls `running` gives. */
export function forwardClientRequests(
  client: Client,
  server: string,
  running: () => ReadonlySet<RunningCall>,
): void {
  const forward = <T>(method: ClientRequestMethod, schema: StandardSchemaV1Sync<unknown, T>) => {
    return (request: { params?: object }, ctx: ClientContext): Promise<T> =>
      ask({ method, params: { ...request.params }, server, running, signal: ctx.mcpReq.signal }, schema);
  };
  client.setRequestHandler(
    "sampling/createMessage",
    forward<CreateMessageResult>("sampling/createMessage", specTypeSchemas.CreateMessageResult),
  );
  client.setRequestHandler(
    "elicitation/create",
    forward<ElicitResult>("elicitation/create", specTypeSchemas.ElicitResult),
  );
  client.setRequestHandler(
    "roots/list",
    forward<ListRootsResult>("roots/list", specTypeSchemas.ListRootsResult),
  );
}

interface Asked {
  method: ClientRequestMethod;
  params: Record<string, unknown>;
  server: string;
  running: () => ReadonlySet<RunningCall>;
  signal: AbortSignal;
}

/** Asks the caller of the server's only running call; its answer, checked, or a JSON-RPC error. */
async function ask<T>(asked: Asked, schema: StandardSchemaV1Sync<unknown, T>): Promise<T> {
  const { method, server } = asked;
  const calls = [...asked.running()];
  const call = calls.length === 1 ? calls[0] : undefined;
  const observer = call?.observer;
  if (call === undefined || observer?.request === undefined) {
    const why =
      call === undefined
        ? `${calls.length} calls are running on ${server}, so Writ cannot tell whose caller to ask`
        : `the caller of ${call.contract} cannot take it`;
    throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `Writ cannot forward ${method}: ${why}`);
  }
  const request: ClientRequest = { method, params: asked.params, server, contract: call.contract };
  let answer: ClientAnswer;
  try {
    answer = await observer.request(request, asked.signal);
  } catch (error) {
    throw refusal(method, error);
  }
  if ("error" in answer) {
    const { code, message, data } = answer.error;
    throw new ProtocolError(code, quoted(message), data);
  }
  const checked = schema["~standard"].validate(answer.result);
  if (checked.issues !== undefined) {
    const issue = checked.issues[0];
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `the caller's answer to ${method} is malformed${issue === undefined ? "" : `: ${quoted(issue.message)}`}`,
    );
  }
  return checked.value;
}

/** What the server is told when the caller was not asked. */
function refusal(method: ClientRequestMethod, error: unknown): ProtocolError {
  const writ = WritError.from(error);
  const code =
    writ.category === "policy_denied" || writ.category === "rate_limited"
      ? REJECTED
      : writ.category === "not_found"
        ? ProtocolErrorCode.MethodNotFound
        : ProtocolErrorCode.InternalError;
  return new ProtocolError(code, `${method}: ${writ.message}`, writ.toJSON());
}
