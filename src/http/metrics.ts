/**
 * `GET /metrics` in the Prometheus text format: the gateway's own metrics, then the bearer token
 * cache and the upstream MCP servers, which are read from their owners at scrape time.
 */
import type { TokenCacheStats } from "../identity/index.ts";
import type { UpstreamStatus } from "../mcp/upstream.ts";
import { sampleLines } from "../observability/metrics.ts";
import type { Gateway } from "../pipeline/index.ts";

export function renderMetrics(gw: Pick<Gateway, "identity" | "metrics" | "mcp">): string {
  return (
    gw.metrics.render() +
    tokenCacheLines(gw.identity.cacheStats()) +
    (gw.mcp ? upstreamLines(gw.mcp.status()) : "")
  );
}

function tokenCacheLines(stats: TokenCacheStats): string {
  return sampleLines("writ_token_cache_total", "Bearer token verifications, by cache result.", "counter", [
    [{ result: "hit" }, stats.hits],
    [{ result: "miss" }, stats.misses],
  ]);
}

function upstreamLines(servers: readonly UpstreamStatus[]): string {
  return (
    sampleLines(
      "writ_mcp_upstream_up",
      "Whether Writ is connected to an upstream MCP server (1) or not (0).",
      "gauge",
      servers.map((s) => [{ server: s.name }, s.connected ? 1 : 0]),
    ) +
    sampleLines(
      "writ_mcp_upstream_tools",
      "Tools an upstream MCP server currently offers.",
      "gauge",
      servers.map((s) => [{ server: s.name }, s.tools]),
    )
  );
}
