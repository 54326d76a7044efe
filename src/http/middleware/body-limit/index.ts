/**
 * The body limit of `/v1` and `/mcp`, without the cost of `hono/body-limit`: that middleware reads
 * `c.req.raw.body`, which makes @hono/node-server build a full undici `Request` (a web stream
 * over the socket, an AbortSignal) for every request, the one thing its lightweight request
 * exists to avoid.
 *
 * - With a Content-Length (and no Transfer-Encoding) the header is the body's size: Node's HTTP
 *   parser reads exactly that many bytes, so comparing the header is the whole check.
 * - Without one (a chunked body) the Node request is read here with a byte count, and refused as
 *   soon as the count passes the limit, before the rest arrives. A body within the limit is
 *   handed on as the request's `rawBody`, the buffer @hono/node-server reads a request's body
 *   from when it is there (its lightweight `text()`, and the full `Request` if one is built).
 * - Off a Node HTTP/1 server (tests' `app.request`, HTTP/2) it is `hono/body-limit`.
 *
 * A body of exactly the limit passes; the 413 answer is the caller's `onTooLarge`.
 */
import { IncomingMessage } from "node:http";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit as honoBodyLimit } from "hono/body-limit";
import { bodyNotWhole } from "../../../core/request-body.ts";

export function bodyLimit(maxBytes: number, onTooLarge: (c: Context) => Response): MiddlewareHandler {
  const fallback = honoBodyLimit({ maxSize: maxBytes, onError: onTooLarge });
  return async (c, next) => {
    const method = c.req.method;
    // A GET or HEAD request has no body (hono's middleware sees a null body and passes it on).
    if (method === "GET" || method === "HEAD") return next();
    const length = c.req.header("content-length");
    if (length !== undefined && c.req.header("transfer-encoding") === undefined) {
      return Number.parseInt(length, 10) > maxBytes ? onTooLarge(c) : next();
    }
    const incoming = nodeRequestOf(c.env);
    if (incoming === undefined || incoming.readableDidRead) return fallback(c, next);
    const body = await readUpTo(incoming, maxBytes);
    if (body === undefined) return onTooLarge(c);
    Object.defineProperty(incoming, "rawBody", { value: body, configurable: true });
    return next();
  };
}

/** The Node HTTP/1 request under the hono request, when the app is served by @hono/node-server. */
function nodeRequestOf(env: unknown): IncomingMessage | undefined {
  if (typeof env !== "object" || env === null || !("incoming" in env)) return undefined;
  return env.incoming instanceof IncomingMessage ? env.incoming : undefined;
}

/**
 * The whole body of `incoming`, or undefined as soon as more than `maxBytes` arrived (the stream
 * is then paused: the answer closes the connection). A body that stops short (the client went
 * away, the request timeout) is the caller's `invalid_argument`, as when a route reads it.
 */
function readUpTo(incoming: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onFailure);
      incoming.off("close", onClose);
    };
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      size += bytes.byteLength;
      if (size > maxBytes) {
        done();
        incoming.pause();
        resolve(undefined);
      } else chunks.push(bytes);
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onFailure = (error?: unknown) => {
      done();
      reject(bodyNotWhole(error));
    };
    const onClose = () => (incoming.readableEnded ? onEnd() : onFailure());
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onFailure);
    incoming.on("close", onClose);
  });
}
