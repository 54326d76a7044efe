/**
 * The answer to a `tools/call` from a caller that accepts Server-Sent Events: a stream only when
 * one is needed. The SDK's transport runs in JSON mode; when the call sends a notification
 * (progress, a log message) or a request (an upstream's, forwarded: server-requests.ts) before its answer, or has not answered within `STREAM_AFTER_MS`
 * (so that the caller gets its headers while a long call runs), the answer switches to an SSE
 * stream carrying every message from then on, the answer last, as the SDK's SSE mode writes them.
 * A call that answers promptly without notifications, the common case, is answered as JSON:
 * MCP lets a server answer a POST either way, and a JSON answer costs both sides far less than a
 * stream (about a tenth of a call's CPU through Writ's /mcp).
 */
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** How long a call may run before its answer becomes a stream anyway. */
export const STREAM_AFTER_MS = 1000;

/** The headers of the SDK's SSE answers (stateless: no session id). */
export const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

export interface LazyStream {
  /** Resolves with the stream's Response once the answer switches to a stream; never otherwise. */
  opened: Promise<Response>;
  /** Stops waiting to switch (the JSON answer is ready, or the request failed). */
  settle(): void;
}

/** A message of the POST's answer: once a stream is open it goes there, the answer closing it. */
export interface LazyAnswer extends LazyStream {
  /**
   * Writes `message` to the stream when one is open. A notification (or a request) about the
   * running call (`aboutCall`) opens the stream first.
   */
  write(message: JSONRPCMessage, aboutCall: boolean): void;
}

/**
 * The answer of a POST carrying one `tools/call`, switched to a stream when it must (see the
 * module's comment), whoever produces its messages: the SDK's transport (`lazyStream`) or Writ's
 * own answer of a plain call (fast-path.ts).
 */
export function lazyAnswer(): LazyAnswer {
  const encoder = new TextEncoder();
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let ended = false;
  let open: (response: Response) => void = () => undefined;
  const opened = new Promise<Response>((resolve) => {
    open = resolve;
  });
  const start = () => {
    if (controller !== undefined || ended) return;
    clearTimeout(timer);
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
      },
      cancel: () => {
        ended = true;
      },
    });
    open(new Response(body, { status: 200, headers: SSE_HEADERS }));
  };
  const timer = setTimeout(start, STREAM_AFTER_MS);
  return {
    opened,
    write: (message, aboutCall) => {
      if (aboutCall) start();
      if (controller === undefined || ended) return;
      try {
        controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`));
        if (!("method" in message)) {
          ended = true;
          controller.close();
        }
      } catch {
        ended = true;
      }
    },
    settle: () => {
      clearTimeout(timer);
      if (controller === undefined) ended = true;
    },
  };
}

/**
 * Watches what the transport (built with `enableJsonResponse: true`) sends for the POST's one
 * request and switches its answer to a stream when it must (see the module's comment).
 */
export function lazyStream(transport: WebStandardStreamableHTTPServerTransport): LazyStream {
  const lazy = lazyAnswer();
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    // A notification (or a request) about the running call, before its answer: stream from now on.
    lazy.write(message, "method" in message && options?.relatedRequestId !== undefined);
    return send(message, options);
  };
  return { opened: lazy.opened, settle: lazy.settle };
}
