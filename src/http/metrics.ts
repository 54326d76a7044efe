/**
 * `GET /metrics` in the Prometheus text format: the gateway's own metrics, then the bearer token
 * cache and the upstream MCP servers, which are read from their owners at scrape time
 * (`gatewaySamples`, which OpenTelemetry export reads too).
 */
import type { Gateway } from "../core/gateway.ts";
import { gatewaySamples } from "../observability/samples.ts";

export function renderMetrics(gw: Pick<Gateway, "identity" | "metrics" | "mcp">): Promise<string> {
  return gw.metrics.render(gatewaySamples(gw));
}
