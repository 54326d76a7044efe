/**
 * The one error path of the HTTP layer (DESIGN section 7): whatever a handler or middleware
 * throws becomes a structured WritError body with the category's status. An error that is not a
 * WritError is `internal`, and only internal errors are written to the server's log.
 */
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { WritError } from "../core/errors.ts";

/** `error` as the WritError a caller sees. */
export function asWritError(error: unknown): WritError {
  return WritError.from(error, {
    message: "Writ failed while handling the request",
    suggestedFix: "retry later; if it persists, tell the operator the time of the request",
  });
}

/** The answer for a WritError: its body, with the status of its category. */
export function errorResponse(c: Context, e: WritError): Response {
  return c.json(e.toJSON(), e.httpStatus as ContentfulStatusCode);
}

export const onError: ErrorHandler = (error, c) => {
  const e = asWritError(error);
  if (e.category === "internal") console.error("internal error:", error);
  return errorResponse(c, e);
};

export const notFound: NotFoundHandler = (c) =>
  errorResponse(
    c,
    new WritError("not_found", `no route ${c.req.method} ${c.req.path}`, {
      suggestedFix: "see the README for the API routes",
    }),
  );

/** The body limit's answer (a 413 `payload_too_large`). */
export function payloadTooLarge(c: Context, limitBytes: number): Response {
  // The rest of the body is never read, so the connection cannot be reused: say so, or a
  // keep-alive client sends its next request on a socket the server is about to close.
  c.header("connection", "close");
  return errorResponse(
    c,
    new WritError("payload_too_large", `the request body is larger than ${limitBytes} bytes`, {
      suggestedFix: "send fewer calls per request or smaller arguments",
    }),
  );
}
