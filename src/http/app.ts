/**
 * The HTTP API (hono): the app assembled from its middleware and one route module per resource.
 *
 *   POST /v1/proposals            routes/proposals.ts  decide (and run) a model's proposed calls
 *   POST /v1/execute              routes/execute.ts    run one call with its grant
 *   GET  /v1/tools                routes/tools.ts      the tools the caller may use
 *   POST /v1/run_code[/sdk]       routes/run-code.ts   Code Mode: run a program, its SDK
 *   …    /v1/approvals[/:id/…]    routes/approvals.ts  list, read, approve, reject approvals
 *   GET  /v1/decisions[/:id]      routes/decisions.ts  the decision log (reviewer role)
 *   GET  /v1/policy/revisions[/:id] routes/policy-revisions.ts  archived policy revisions (reviewer, admin)
 *   PUT|GET /v1/resources/:t/:id  routes/resources.ts  resources and owners (admin role)
 *   POST /mcp                     the MCP endpoint (Streamable HTTP, stateless; src/mcp/endpoint.ts)
 *   GET  /.well-known/jwks.json   routes/well-known.ts the public keys that verify grants
 *   GET  /healthz, /metrics       routes/health.ts     liveness, policy state, Prometheus metrics
 *   /console/…                    the web console for reviewers and approvers (src/console/)
 *
 * With OpenTelemetry on, every `/v1` and `/mcp` request is a span first (middleware/tracing).
 * Every `/v1`, `/mcp` and `/console` request gets its request id (middleware/request-id) and is
 * audited (audit.ts: every 400/401/403/413 answer is on the decision log); `/v1` and `/mcp`
 * requests pass the body limit (the console has its own); routes that need a
 * caller authenticate it once (middleware/auth). Whatever is thrown becomes
 * a structured WritError body in the one `onError` (errors.ts; DESIGN section 7).
 */
import { Hono } from "hono";
import { CodeMode, codeModeConfigSchema } from "../codemode/index.ts";
import { consoleRoutes } from "../console/index.tsx";
import { RefusalAggregator } from "../decisionlog/index.ts";
import { mcpEndpoint } from "../mcp/endpoint.ts";
import {
  allowedHost,
  LOOPBACK_HOSTS,
  LOOPBACK_ORIGINS,
  transportSecurity,
} from "../mcp/transport-security.ts";
import { type Gateway, toolDiscovery } from "../pipeline/index.ts";
import { auditRequests } from "./audit.ts";
import type { AppOptions, HttpEnv } from "./env.ts";
import { notFound, onError, payloadTooLarge } from "./errors.ts";
import { bodyLimit } from "./middleware/body-limit/index.ts";
import { requestId } from "./middleware/request-id/index.ts";
import { traceRequests } from "./middleware/tracing/index.ts";
import { approvalRoutes } from "./routes/approvals.ts";
import { decisionRoutes } from "./routes/decisions.ts";
import { executeRoutes } from "./routes/execute.ts";
import { healthRoutes } from "./routes/health.ts";
import { policyRevisionRoutes } from "./routes/policy-revisions.ts";
import { proposalRoutes } from "./routes/proposals.ts";
import { resourceRoutes } from "./routes/resources.ts";
import { runCodeRoutes } from "./routes/run-code.ts";
import { toolRoutes } from "./routes/tools.ts";
import { wellKnownRoutes } from "./routes/well-known.ts";

export type { AppOptions, HttpEnv } from "./env.ts";

/** The app, typed with its environment (`HttpEnv`: the request id, the verified subject). */
export function createApp(gw: Gateway, options: AppOptions): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const discovery = toolDiscovery(gw);
  const codeMode = new CodeMode(
    gw,
    discovery,
    options.codeMode ?? codeModeConfigSchema.parse({}),
    options.sandbox,
  );
  app.onError(onError);
  app.notFound(notFound);

  const limitBody = bodyLimit(options.bodyLimitBytes, (c) => payloadTooLarge(c, options.bodyLimitBytes));
  // Refusals on the record; identical ones of unauthenticated callers aggregated per source.
  let aggregator = gw.refusals;
  if (aggregator === undefined) {
    const own = new RefusalAggregator(gw.log, { windowMs: options.refusalWindowMs ?? 10_000 });
    gw.log.beforeDrain(() => own.flush());
    aggregator = own;
  }
  // One audit interceptor for every entrance: the API, /mcp and the console.
  const audited = auditRequests({ log: gw.log, aggregator, policy: gw.policy });
  if (options.tracing) {
    app.use("/v1/*", traceRequests(options.tracing));
    if (options.mcpEndpoint !== false) app.use("/mcp", traceRequests(options.tracing));
  }
  app.use("/v1/*", requestId(), audited, limitBody);
  const mcpSecurity = options.mcpSecurity ?? {
    allowedHosts: LOOPBACK_HOSTS,
    allowedOrigins: LOOPBACK_ORIGINS,
  };
  // The endpoint's metadata names it from the Host: only for Hosts /mcp answers.
  app.use("/.well-known/oauth-protected-resource", allowedHost(mcpSecurity));
  app.use("/.well-known/oauth-protected-resource/*", allowedHost(mcpSecurity));
  if (options.mcpEndpoint !== false) {
    app.use("/mcp", transportSecurity(mcpSecurity), requestId(), audited, limitBody);
    app.all("/mcp", mcpEndpoint(gw, discovery, codeMode, options.mcpSessions));
  }

  app.route("/v1/proposals", proposalRoutes(gw));
  app.route("/v1/execute", executeRoutes(gw));
  app.route("/v1/tools", toolRoutes(gw, discovery));
  app.route("/v1/run_code", runCodeRoutes(gw, codeMode));
  app.route("/v1/approvals", approvalRoutes(gw, options.roles.platform));
  app.route("/v1/decisions", decisionRoutes(gw, options.roles.reviewer, options.roles.platform));
  app.route(
    "/v1/policy/revisions",
    policyRevisionRoutes(gw, [...new Set([...options.roles.reviewer, ...options.roles.admin])]),
  );
  app.route("/v1/resources", resourceRoutes(gw, options.roles.admin, options.roles.platform));
  app.route("/.well-known", wellKnownRoutes(gw));
  app.route("/", healthRoutes(gw));
  app.use("/console/*", requestId(), audited);
  app.route("/console", consoleRoutes(gw, options.roles, options.console));
  return app;
}
