/**
 * The metrics read from their owners at scrape or export time: the bearer token cache and the
 * upstream MCP servers. `/metrics` renders them (src/http/metrics.ts) and OpenTelemetry mirrors
 * them (`mirrorSamples`), under the same names and labels.
 */
import type { Gateway } from "../core/gateway.ts";
import type { SampledMetric } from "./metrics.ts";

export function gatewaySamples(gw: Pick<Gateway, "identity" | "mcp">): SampledMetric[] {
  const samples: SampledMetric[] = [
    {
      name: "writ_token_cache_total",
      help: "Bearer token verifications, by cache result.",
      type: "counter",
      rows: () => {
        const stats = gw.identity.cacheStats();
        return [
          [{ result: "hit" }, stats.hits],
          [{ result: "miss" }, stats.misses],
        ];
      },
    },
  ];
  const mcp = gw.mcp;
  if (mcp !== undefined) {
    samples.push(
      {
        name: "writ_mcp_upstream_up",
        help: "Whether Writ is connected to an upstream MCP server (1) or not (0).",
        type: "gauge",
        rows: () => mcp.status().map((s) => [{ server: s.name }, s.connected ? 1 : 0]),
      },
      {
        name: "writ_mcp_upstream_tools",
        help: "Tools an upstream MCP server currently offers.",
        type: "gauge",
        rows: () => mcp.status().map((s) => [{ server: s.name }, s.tools]),
      },
    );
  }
  return samples;
}
