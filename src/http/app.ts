/**
 * The HTTP API (hono). Routes:
 *
 *   POST /v1/proposals            decide (and with `execute: true`, run) a model's proposed calls
 *   POST /v1/execute              run one call with its grant ({grant, tool, arguments} or
 *                                 {grant, call}); answers {tool, result}. With an
 *                                 `Idempotency-Key` header (also on proposals), a repeat of the
 *                                 same request answers the stored outcome without running again
 *   GET  /v1/tools                the tools the caller may use, as its model family sees them
 *   GET  /v1/approvals            approval requests the caller made or may decide (filter: status)
 *   GET  /v1/approvals/:id        one approval (its requester or an eligible approver); the
 *                                 requester finds the released grant here once it is approved
 *   POST /v1/approvals/:id/approve  approve ({reason?}): the policy re-runs; answers {approval, grant}
 *   POST /v1/approvals/:id/reject   reject ({reason}, required): answers {approval}
 *   GET  /v1/decisions            the decision log, filtered and paged (reviewer role)
 *   GET  /v1/decisions/:id        one entry (reviewer role)
 *   PUT  /v1/resources/:type/:id  create or replace a resource and its owner (admin role)
 *   GET  /v1/resources/:type/:id  read a resource (admin role)
 *   POST /mcp                     the MCP endpoint (Streamable HTTP, stateless; src/mcp/endpoint.ts)
 *   GET  /.well-known/jwks.json   the public keys that verify grants
 *   GET  /healthz                 liveness and the policy's state
 *   GET  /metrics                 Prometheus metrics
 *   /console/…                    the web console for reviewers and approvers (src/console/)
 *
 * Every error is a structured WritError body (DESIGN section 7).
 */
import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import { approvalView, approve, listApprovals, readApproval, reject } from "../approvals/index.ts";
import { consoleRoutes } from "../console/index.tsx";
import { jsonDigest } from "../core/digest.ts";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import { proposalFormats, type Subject } from "../core/types.ts";
import { toDecisionFilter } from "../decisionlog/query.ts";
import type { TokenCacheStats } from "../identity/index.ts";
import { mcpEndpoint } from "../mcp/endpoint.ts";
import type { UpstreamStatus } from "../mcp/upstream.ts";
import { sampleLines } from "../observability/metrics.ts";
import { executeWithGrant, type Gateway, handleProposal, ToolDiscovery } from "../pipeline/index.ts";
import { approvalStatuses } from "../store/types.ts";

export interface AppOptions {
  bodyLimitBytes: number;
  roles: { reviewer: readonly string[]; admin: readonly string[]; approver: readonly string[] };
  /** Serve the MCP endpoint at /mcp (default true). */
  mcpEndpoint?: boolean;
}

const proposalBodySchema = z
  .object({
    format: z.enum(proposalFormats).default("auto"),
    payload: z.unknown(),
    session: z.string().min(1).max(200).optional(),
    execute: z.boolean().default(false),
  })
  .strict();

const executeBodySchema = z.union([
  z
    .object({
      grant: z.string().min(1),
      tool: z.string().min(1),
      arguments: z.record(z.string(), z.unknown()).default({}),
    })
    .strict(),
  z.object({ grant: z.string().min(1), call: z.unknown() }).strict(),
]);

const idempotencyKeySchema = z.string().min(1).max(200);
/** How long an idempotency key and its stored outcome are kept. */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

interface StoredAnswer {
  status: number;
  body: unknown;
}

/**
 * Runs `work` at most once per (subject, key): the first request claims the key; a repeat with
 * the same request digest gets the stored answer; a different digest, or a repeat while the first
 * is still running, is `conflict`. A failure with no answer worth replaying releases the key.
 */
async function idempotent(
  gw: Gateway,
  subject: Subject,
  key: string,
  request: unknown,
  work: () => Promise<StoredAnswer>,
): Promise<StoredAnswer> {
  const owner = `${subject.tenant}/${subject.id}`;
  const digest = jsonDigest(request);
  const now = new Date();
  const claim = await gw.store.claimIdempotency(
    owner,
    key,
    digest,
    new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
    now,
  );
  if (claim.state !== "claimed") {
    if (claim.request_digest !== digest) {
      throw new WritError("conflict", "this Idempotency-Key was already used for a different request", {
        retryable: false,
        suggestedFix: "use a new Idempotency-Key for a new request",
      });
    }
    if (claim.state === "pending") {
      throw new WritError("conflict", "a request with this Idempotency-Key is still running", {
        retryable: true,
        suggestedFix: "retry shortly: the stored outcome is returned once the first request finishes",
      });
    }
    const stored = storedAnswerSchema.safeParse(claim.outcome);
    if (stored.success) return stored.data;
    throw new WritError("internal", "the stored outcome of this Idempotency-Key is unreadable", {
      suggestedFix: "use a new Idempotency-Key; check the result of the first request before retrying",
      effectCommitted: "unknown",
    });
  }
  let answer: StoredAnswer;
  try {
    answer = await work();
  } catch (error) {
    const e = error instanceof WritError ? error : undefined;
    // Refusals that ran nothing and anything internal are not replayed: the key is released.
    if (e === undefined || e.category === "internal" || e.effectCommitted === false) {
      if (e !== undefined && e.effectCommitted === false && e.category !== "internal") {
        await gw.store.completeIdempotency(owner, key, { status: e.httpStatus, body: e.toJSON() });
      } else {
        await gw.store.releaseIdempotency(owner, key);
      }
      throw error;
    }
    answer = { status: e.httpStatus, body: e.toJSON() };
  }
  await gw.store.completeIdempotency(owner, key, answer);
  return answer;
}

const storedAnswerSchema = z.object({ status: z.number().int(), body: z.unknown() });

const decisionQuerySchema = z
  .object({
    subject: z.string().optional(),
    tenant: z.string().optional(),
    action: z.string().optional(),
    decision: z.enum(["allow", "deny", "require_approval", "allow_with_conditions", "error"]).optional(),
    reason: z.string().optional(),
    resource_type: z.string().optional(),
    resource_id: z.string().optional(),
    since: z.string().optional(),
    until: z.string().optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().optional(),
  })
  .strict();

const resourceBodySchema = z
  .object({
    owner: z.string().min(1),
    tenant: z.string().min(1).default("default"),
    attributes: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

const approvalQuerySchema = z
  .object({
    status: z.enum(approvalStatuses).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().optional(),
  })
  .strict();

const approveBodySchema = z.object({ reason: z.string().min(1).max(2000).optional() }).strict();
const rejectBodySchema = z.object({ reason: z.string().min(1).max(2000) }).strict();

/** An optional JSON body: empty is `{}`. */
async function optionalJsonBody(req: Request): Promise<unknown> {
  const text = await req.text();
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new WritError("invalid_argument", "the request body is not JSON", {
      suggestedFix: "send a JSON body with Content-Type: application/json",
    });
  }
}

const familySchema = z.enum(["default", "openai", "anthropic", "mcp"]).default("default");

function idempotencyKeyOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return parseWith(idempotencyKeySchema, header, "/headers/idempotency-key", "the Idempotency-Key header");
}

function requireRole(subject: Subject, allowed: readonly string[], what: string): void {
  if (!subject.roles.some((r) => allowed.includes(r))) {
    throw new WritError("forbidden", `${what} needs one of the roles ${allowed.join(", ")}`, {
      suggestedFix: "use a token that carries one of those roles",
    });
  }
}

async function jsonBody(req: Request): Promise<unknown> {
  const text = await req.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new WritError("invalid_argument", "the request body is not JSON", {
      suggestedFix: "send a JSON body with Content-Type: application/json",
    });
  }
}

function parseWith<T extends z.ZodType>(
  schema: T,
  value: unknown,
  prefix: string,
  what: string,
): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new WritError("invalid_argument", `${what} is malformed`, {
      fieldErrors: fieldErrorsFromZod(parsed.error, prefix),
      suggestedFix: "fix the fields listed in field_errors",
    });
  }
  return parsed.data;
}

export function createApp(gw: Gateway, options: AppOptions): Hono {
  const app = new Hono();
  const discovery = new ToolDiscovery(gw);

  app.onError((error, c) => {
    const e =
      error instanceof WritError
        ? error
        : new WritError("internal", "Writ failed while handling the request", {
            suggestedFix: "retry later; if it persists, tell the operator the time of the request",
            cause: error,
          });
    if (e.category === "internal") console.error("internal error:", error);
    return c.json(e.toJSON(), e.httpStatus as ContentfulStatusCode);
  });

  app.notFound((c) =>
    c.json(
      new WritError("not_found", `no route ${c.req.method} ${c.req.path}`, {
        suggestedFix: "see the README for the API routes",
      }).toJSON(),
      404,
    ),
  );

  const limitBody = bodyLimit({
    maxSize: options.bodyLimitBytes,
    onError: (c) => {
      // The rest of the body is never read, so the connection cannot be reused: say so, or a
      // keep-alive client sends its next request on a socket the server is about to close.
      c.header("connection", "close");
      return c.json(
        new WritError(
          "payload_too_large",
          `the request body is larger than ${options.bodyLimitBytes} bytes`,
          {
            suggestedFix: "send fewer calls per request or smaller arguments",
          },
        ).toJSON(),
        413,
      );
    },
  });
  app.use("/v1/*", limitBody);
  if (options.mcpEndpoint !== false) {
    app.use("/mcp", limitBody);
    app.all("/mcp", mcpEndpoint(gw, discovery));
  }

  app.post("/v1/proposals", async (c) => {
    const body = parseWith(proposalBodySchema, await jsonBody(c.req.raw), "", "the proposal request");
    const run = async (): Promise<StoredAnswer> => {
      const results = await handleProposal(gw, {
        authorization: c.req.header("authorization"),
        format: body.format,
        payload: body.payload,
        ...(body.session === undefined ? {} : { session: body.session }),
        execute: body.execute,
        requestId: c.req.header("x-request-id") ?? randomUUID(),
      });
      return { status: 200, body: { results } };
    };
    const key = idempotencyKeyOf(c.req.header("idempotency-key"));
    let answer: StoredAnswer;
    if (key !== undefined && body.execute) {
      // An unauthenticated request goes to the pipeline, which refuses and logs it.
      const subject = await gw.identity.verify(c.req.header("authorization")).catch(() => undefined);
      answer = subject ? await idempotent(gw, subject, key, { route: "proposals", body }, run) : await run();
    } else {
      answer = await run();
    }
    return c.json(answer.body as object, answer.status as ContentfulStatusCode);
  });

  app.post("/v1/execute", async (c) => {
    const subject = await gw.identity.verify(c.req.header("authorization"));
    const body = parseWith(executeBodySchema, await jsonBody(c.req.raw), "", "the execute request");
    const call = "call" in body ? body.call : { tool: body.tool, arguments: body.arguments };
    const run = async (): Promise<StoredAnswer> => {
      const answer = await executeWithGrant(gw, {
        authorization: c.req.header("authorization"),
        grant: body.grant,
        call,
        requestId: c.req.header("x-request-id") ?? randomUUID(),
      });
      return { status: 200, body: answer };
    };
    const key = idempotencyKeyOf(c.req.header("idempotency-key"));
    const answer =
      key === undefined
        ? await run()
        : await idempotent(gw, subject, key, { route: "execute", grant: body.grant, call }, run);
    return c.json(answer.body as object, answer.status as ContentfulStatusCode);
  });

  app.get("/v1/tools", async (c) => {
    const subject = await gw.identity.verify(c.req.header("authorization"));
    const family = parseWith(familySchema, c.req.query("family"), "/family", "the family parameter");
    return c.json({ tools: discovery.list(subject, family) });
  });

  app.get("/v1/approvals", async (c) => {
    const subject = await gw.identity.verify(c.req.header("authorization"));
    const q = parseWith(approvalQuerySchema, c.req.query(), "", "the approval query");
    const page = await listApprovals(
      gw,
      subject,
      q.status ? { status: q.status } : {},
      q.limit,
      q.cursor,
      c.req.header("x-request-id") ?? randomUUID(),
    );
    return c.json({
      approvals: page.approvals.map((a) => approvalView(a, subject)),
      ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
    });
  });

  app.get("/v1/approvals/:id", async (c) => {
    const subject = await gw.identity.verify(c.req.header("authorization"));
    const a = await readApproval(
      gw,
      c.req.param("id"),
      subject,
      c.req.header("x-request-id") ?? randomUUID(),
    );
    return c.json(approvalView(a, subject));
  });

  app.post("/v1/approvals/:id/approve", async (c) => {
    const subject = await gw.identity.verify(c.req.header("authorization"));
    const body = parseWith(approveBodySchema, await optionalJsonBody(c.req.raw), "", "the approval");
    const { approval, grant } = await approve(
      gw,
      c.req.param("id"),
      subject,
      body.reason ?? null,
      c.req.header("x-request-id") ?? randomUUID(),
    );
    return c.json({ approval: approvalView(approval, subject), grant });
  });

  app.post("/v1/approvals/:id/reject", async (c) => {
    const subject = await gw.identity.verify(c.req.header("authorization"));
    const body = parseWith(rejectBodySchema, await optionalJsonBody(c.req.raw), "", "the rejection");
    const approval = await reject(
      gw,
      c.req.param("id"),
      subject,
      body.reason,
      c.req.header("x-request-id") ?? randomUUID(),
    );
    return c.json({ approval: approvalView(approval, subject) });
  });

  app.get("/v1/decisions", async (c) => {
    const subject = await gw.identity.verify(c.req.header("authorization"));
    requireRole(subject, options.roles.reviewer, "reading the decision log");
    const q = parseWith(decisionQuerySchema, c.req.query(), "", "the decision query");
    const page = await gw.log.query(toDecisionFilter(q), q.limit, q.cursor);
    return c.json(page);
  });

  app.get("/v1/decisions/:id", async (c) => {
    const subject = await gw.identity.verify(c.req.header("authorization"));
    requireRole(subject, options.roles.reviewer, "reading the decision log");
    const entry = await gw.log.get(c.req.param("id"));
    if (!entry) {
      throw new WritError("not_found", `no decision ${c.req.param("id")}`, {
        suggestedFix: "check the decision id",
      });
    }
    return c.json(entry);
  });

  app.put("/v1/resources/:type/:id", async (c) => {
    const subject = await gw.identity.verify(c.req.header("authorization"));
    requireRole(subject, options.roles.admin, "writing resources");
    const body = parseWith(resourceBodySchema, await jsonBody(c.req.raw), "", "the resource");
    const stored = await gw.store.putResource({ type: c.req.param("type"), id: c.req.param("id"), ...body });
    return c.json(stored);
  });

  app.get("/v1/resources/:type/:id", async (c) => {
    const subject = await gw.identity.verify(c.req.header("authorization"));
    requireRole(subject, options.roles.admin, "reading resources");
    const stored = await gw.store.getResource(c.req.param("type"), c.req.param("id"));
    if (!stored)
      throw new WritError("not_found", "no such resource", { suggestedFix: "create it with PUT first" });
    return c.json(stored);
  });

  app.get("/.well-known/jwks.json", async (c) => {
    // Another instance may have rotated the shared key file.
    await gw.grants.refresh();
    c.header("cache-control", "public, max-age=60");
    return c.json(gw.grants.jwks());
  });

  app.get("/healthz", (c) => {
    const policyError = gw.policy.lastLoadError;
    const body = {
      status: gw.policy.revision === undefined ? "unavailable" : policyError ? "degraded" : "ok",
      policy_revision: gw.policy.revision ?? null,
      ...(policyError ? { policy_error: policyError } : {}),
      ...(gw.mcp ? { mcp_servers: gw.mcp.status() } : {}),
    };
    return c.json(body, gw.policy.revision === undefined ? 503 : 200);
  });

  app.get("/metrics", (c) => {
    const stats = gw.identity.cacheStats();
    const text =
      gw.metrics.render() + tokenCacheLines(stats) + (gw.mcp ? upstreamLines(gw.mcp.status()) : "");
    return c.text(text, 200, { "content-type": "text/plain; version=0.0.4" });
  });

  // The web console for reviewers and approvers (src/console/).
  app.route("/console", consoleRoutes(gw, options.roles));

  return app;
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
