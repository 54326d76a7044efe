/**
 * Request ids (issue 27). Writ mints its own for every request, `c.var.requestId`: the id that
 * keys its records (decision-log entries, grants' metadata, the `X-Request-Id` backends get,
 * spans), answered in the response's `X-Request-Id`. A caller's `X-Request-Id` never stands for
 * it, so no caller can choose it or copy another caller's. The caller's id, when it is within
 * hono's request-id bounds (at most 255 characters, each a letter, digit, `_`, `-` or `=`), is
 * kept beside it: `c.var.callerRequestId`, and `caller_request_id` in the entries the request
 * appends (the audit interceptor, `../../audit.ts`, tells the log); anything else is dropped.
 */
import { randomUUID } from "node:crypto";
import { createMiddleware } from "hono/factory";
import type { RequestIdVariables } from "../../env.ts";

/** hono's `requestId()` bounds on an id a caller sends: length and characters. */
export const CALLER_REQUEST_ID = /^[\w\-=]{1,255}$/;

export function requestId(generate: () => string = randomUUID) {
  return createMiddleware<{ Variables: RequestIdVariables }>(async (c, next) => {
    const own = generate();
    c.set("requestId", own);
    c.header("x-request-id", own);
    const sent = c.req.header("x-request-id");
    if (sent !== undefined && CALLER_REQUEST_ID.test(sent)) c.set("callerRequestId", sent);
    await next();
  });
}
