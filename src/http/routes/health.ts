/**
 * Operations:
 *
 *   GET /healthz  liveness and the policy's state (503 until a policy is loaded)
 *   GET /metrics  Prometheus metrics
 */
import { Hono } from "hono";
import type { Gateway } from "../../pipeline/index.ts";
import type { HttpEnv } from "../env.ts";
import { renderMetrics } from "../metrics.ts";

export function healthRoutes(gw: Gateway): Hono<HttpEnv> {
  return new Hono<HttpEnv>()
    .get("/healthz", (c) => {
      const policyError = gw.policy.lastLoadError;
      const body = {
        status: gw.policy.revision === undefined ? "unavailable" : policyError ? "degraded" : "ok",
        policy_revision: gw.policy.revision ?? null,
        ...(policyError ? { policy_error: policyError } : {}),
        ...(gw.mcp ? { mcp_servers: gw.mcp.status() } : {}),
      };
      return c.json(body, gw.policy.revision === undefined ? 503 : 200);
    })
    .get("/metrics", async (c) =>
      c.text(await renderMetrics(gw), 200, { "content-type": "text/plain; version=0.0.4" }),
    );
}
