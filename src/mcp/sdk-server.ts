/**
 * A 2025-11-25 `/mcp` POST answered by the v1 MCP SDK's server (a 2026-07-28 one is modern.ts's):
 * everything fast-path.ts does not answer itself (initialize, ping, notifications, responses,
 * batches, a request with a progress token or other `_meta`, resources/*, prompts/*). A server and a transport per POST (the endpoint is
 * stateless), each method registered by its module (methods/index.ts); the answer is JSON, or a
 * stream once a `tools/call` sends progress or log messages or runs long (lazy-stream.ts). Every
 * JSON-RPC error leaves with Writ's error as `data`.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { newServer } from "./initialize.ts";
import { lazyStream } from "./lazy-stream.ts";
import { errorWithData, withErrorData } from "./messages.ts";
import { METHODS, type PostContext } from "./methods/index.ts";

/**
 * Answers `request`, whose body was read and checked already (`messages`); `stream`: whether the
 * caller accepts a stream and the answer may become one.
 */
export async function answerWithServer(
  post: PostContext,
  request: Request,
  messages: unknown,
  stream: boolean,
): Promise<Response> {
  const server = newServer(post.sessionsEnabled);
  // A stream is opened only when the call needs one (see lazy-stream.ts): JSON mode either way.
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  // On a session, a resumable stream from the start (session-streams.ts).
  const lazy = stream ? (post.session?.stream(transport) ?? lazyStream(transport)) : undefined;
  // After lazyStream: a stream gets the messages with their error data too.
  sendingErrorData(transport);
  const calls = runningCalls(server);
  for (const method of METHODS)
    method.legacy({ ...post, server, transport, messages, stream, tracked: calls.tracked });
  await server.connect(transport);
  let response: Response;
  try {
    const answered = transport.handleRequest(acceptingBoth(request), { parsedBody: messages });
    if (lazy === undefined) {
      response = await answered;
    } else {
      // Once the answer is a stream, the transport's JSON answer is not used.
      answered.catch(() => undefined);
      response = await Promise.race([answered, lazy.opened]);
      lazy.settle();
    }
  } catch (error) {
    lazy?.settle();
    await server.close();
    throw error;
  }
  calls.handled();
  return withErrorData(response);
}

/** The calls a POST's server runs: it closes once none runs any more (closing earlier would abort them). */
function runningCalls(server: Server): {
  tracked: <T>(handle: () => Promise<T>) => Promise<T>;
  /** Called once the POST was handled: closes the server after its last call answered. */
  handled: () => void;
} {
  let running = 0;
  let idle: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    idle = resolve;
  });
  return {
    tracked: async (handle) => {
      running += 1;
      try {
        return await handle();
      } finally {
        running -= 1;
        if (running === 0) idle();
      }
    },
    handled: () => {
      // Calls start in microtasks of handleRequest; a POST that started none is finished already.
      setImmediate(() => {
        if (running === 0) idle();
      });
      // Once the last call answered (its response is sent after the handler returns), close.
      void finished.then(() => new Promise((resolve) => setImmediate(resolve))).then(() => server.close());
    },
  };
}

/**
 * The SDK's transport insists that a POST accept both JSON and SSE; Writ also serves callers that
 * accept JSON only (or say nothing), answering them with JSON. The body was read already (it is
 * handed over parsed), so the copy carries none.
 */
function acceptingBoth(request: Request): Request {
  const accept = request.headers.get("accept");
  if (accept?.includes("application/json") && accept.includes("text/event-stream")) return request;
  const headers = new Headers(request.headers);
  headers.set("accept", "application/json, text/event-stream");
  return new Request(request.url, { method: request.method, headers });
}

/**
 * Every message the server sends on `transport` with Writ's error as `data` of each JSON-RPC
 * error the SDK answered by itself (an unknown method, a handler's protocol error), so that every
 * error a caller sees on `/mcp` is structured, without reading the answers back.
 */
function sendingErrorData(transport: WebStandardStreamableHTTPServerTransport): void {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => send(errorWithData(message), options);
}
