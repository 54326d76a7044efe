/**
 * The `_meta` Writ sends with each upstream request: the grant, Writ's request id, the progress
 * token of a caller that listens, and the running span's W3C trace context (`traceparent`,
 * `tracestate`, the keys SEP-414 gives them) so that the upstream's spans join the gateway
 * request's trace. On a 2026-07-28 connection a caller that listens for log messages also asks for
 * them (`io.modelcontextprotocol/logLevel`: there a server sends none to a request without it);
 * a 2025 request carries no `io.modelcontextprotocol/` key, so that it stays a legacy request.
 */
import { LOG_LEVEL_META_KEY, TRACEPARENT_META_KEY, TRACESTATE_META_KEY } from "@modelcontextprotocol/client";
import { traceHeaders } from "../../observability/tracing.ts";
import { GRANT_META_KEY } from "./config.ts";

export interface RequestMetaOptions {
  grant: string;
  requestId: string;
  progressToken: string | undefined;
  /** Whether the caller listens for log messages and the connection speaks 2026-07-28. */
  modernLogs: boolean;
}

export function requestMeta(options: RequestMetaOptions): Record<string, unknown> {
  const meta: Record<string, unknown> = {
    [GRANT_META_KEY]: options.grant,
    "writ/request_id": options.requestId,
  };
  if (options.progressToken !== undefined) meta.progressToken = options.progressToken;
  const trace = traceHeaders();
  if (trace.traceparent !== undefined) meta[TRACEPARENT_META_KEY] = trace.traceparent;
  if (trace.tracestate !== undefined) meta[TRACESTATE_META_KEY] = trace.tracestate;
  if (options.modernLogs) meta[LOG_LEVEL_META_KEY] = "debug";
  return meta;
}
