/**
 * The request's span (issue 17): a server span per `/v1/*` and `/mcp` request, a child of the
 * caller's W3C `traceparent` when it sends one, that the pipeline's stage spans hang under
 * (src/observability/tracing.ts). Installed only when telemetry is on.
 *
 * Attributes follow OpenTelemetry's HTTP server conventions (method, route, path, status) plus
 * the request id; never the query string, headers or body. A 5xx answer sets the span's status
 * to ERROR, a 4xx does not (the server did its job). A streamed answer (SSE) ends the span when
 * the stream ends, not when its headers leave.
 */
import { createMiddleware } from "hono/factory";
import { routePath } from "hono/route";
import {
  extractTraceContext,
  failSpan,
  type RequestTracing,
  requestSpan,
} from "../../../observability/tracing.ts";
import type { RequestIdVariables } from "../../env.ts";
import { afterAnswer } from "../../stream-end.ts";

// OpenTelemetry's stable HTTP server attributes, spelled out rather than importing
// @opentelemetry/semantic-conventions on every start for five strings.
const ATTR_HTTP_REQUEST_METHOD = "http.request.method";
const ATTR_HTTP_RESPONSE_STATUS_CODE = "http.response.status_code";
const ATTR_HTTP_ROUTE = "http.route";
const ATTR_URL_PATH = "url.path";
const ATTR_URL_SCHEME = "url.scheme";

export function traceRequests(tracing: RequestTracing) {
  return createMiddleware<{ Variables: RequestIdVariables }>(async (c, next) => {
    const url = new URL(c.req.url);
    const method = c.req.method;
    const { span } = await requestSpan(
      tracing,
      method,
      extractTraceContext(tracing, c.req.raw.headers),
      {
        [ATTR_HTTP_REQUEST_METHOD]: method,
        [ATTR_URL_PATH]: url.pathname,
        [ATTR_URL_SCHEME]: url.protocol.replace(/:$/, ""),
      },
      () => next(),
    );
    // The route the request matched (`/v1/approvals/:id`), not its path: low cardinality names.
    const route = routePath(c, -1);
    span.updateName(`${method} ${route}`);
    span.setAttribute(ATTR_HTTP_ROUTE, route);
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, c.res.status);
    // Set by requestId() unless an earlier middleware answered first.
    const id: unknown = c.get("requestId");
    if (typeof id === "string") span.setAttribute("writ.request_id", id);
    const caller: unknown = c.get("callerRequestId");
    if (typeof caller === "string") span.setAttribute("writ.caller_request_id", caller);
    if (c.res.status >= 500) failSpan(span, new HttpStatusError(c.res.status));
    // A stream (an MCP call answered as SSE) is still being answered: the span ends with it.
    afterAnswer(c, () => span.end());
  });
}

class HttpStatusError extends Error {
  readonly code: string;
  constructor(status: number) {
    super(`HTTP ${status}`);
    this.code = String(status);
  }
}
