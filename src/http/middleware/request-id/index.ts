/**
 * Request ids: the caller's `X-Request-Id`, or a new UUID. Made here once per request and read
 * as `c.var.requestId`; it joins the decision-log entries and grant metadata of the request.
 *
 * Unlike `hono/request-id`, the caller's id is taken as sent (the decision log and the backends
 * see exactly what the caller sent) and no response header is added.
 */
import { randomUUID } from "node:crypto";
import { createMiddleware } from "hono/factory";
import type { RequestIdVariables } from "../../env.ts";

export function requestId(generate: () => string = randomUUID) {
  return createMiddleware<{ Variables: RequestIdVariables }>(async (c, next) => {
    c.set("requestId", c.req.header("x-request-id") ?? generate());
    await next();
  });
}
