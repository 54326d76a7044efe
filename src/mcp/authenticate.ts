/**
 * The caller of a `/mcp` POST: its bearer JWT verified exactly as the HTTP API verifies one (with
 * the endpoint's RFC 8707 resource as the audience when configured), or the 401 that answers it,
 * with the RFC 9728 challenge; a refused POST's calls are in the decision log first.
 */
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import { WritError } from "../core/errors.ts";
import { isRecord } from "../core/json.ts";
import { bodyText } from "../core/request-body.ts";
import type { Subject } from "../core/types.ts";
import { type Gateway, logRefusedRequest } from "../pipeline/index.ts";
import { asErrorBody } from "./answers.ts";
import { mcpChallenge } from "./resource-metadata.ts";

/** Set by the app's `requestId()` middleware, which runs before the endpoint. */
export type McpEnv = { Variables: { requestId: string } };

/** The POST's caller, or the 401 answer (its refused calls logged). */
export async function authenticate(gw: Gateway, c: Context<McpEnv>): Promise<Subject | Response> {
  const authorization = c.req.header("authorization");
  try {
    return await gw.identity.verify(authorization, { resource: gw.identity.protectedResource?.resource });
  } catch (error) {
    await logRefusedCalls(gw, c.req.raw, error, c.var.requestId);
    const body = asErrorBody(error);
    const refusal =
      authorization === undefined ? undefined : { code: "invalid_token" as const, description: body.message };
    const challenge = mcpChallenge(c.req.url, gw.identity.protectedResource, refusal);
    return new Response(JSON.stringify(body), {
      status: 401,
      headers: { "content-type": "application/json", "www-authenticate": challenge },
    });
  }
}

/** A request that is not a POST: the endpoint keeps no session to open (GET) or delete (DELETE). */
export function notPost(method: string): Response {
  const error = new WritError(
    "invalid_argument",
    `Writ's MCP endpoint is stateless and answers POST only, not ${method}`,
    { suggestedFix: "send each JSON-RPC message in a POST; there is no session to open or delete" },
  );
  return jsonRpcError(405, ErrorCode.ConnectionClosed, error, { allow: "POST" });
}

/** An HTTP answer that is one JSON-RPC error, with Writ's `error` as its data. */
export function jsonRpcError(
  status: number,
  code: number,
  error: WritError,
  headers: Record<string, string> = {},
): Response {
  return new Response(
    JSON.stringify({
      jsonrpc: "2.0",
      error: { code, message: error.message, data: error.toJSON() },
      id: null,
    }),
    { status, headers: { "content-type": "application/json", ...headers } },
  );
}

/** The methods that propose a call (and are logged when refused). */
const PROPOSING = new Set(["tools/call", "resources/read", "prompts/get"]);

/**
 * Tool calls (resource reads, prompts) refused for want of a valid token are in the decision log like any refused
 * proposal, through the pipeline's one refusal path (nothing is decided again).
 */
async function logRefusedCalls(
  gw: Gateway,
  request: Request,
  error: unknown,
  requestId: string,
): Promise<void> {
  let body: unknown;
  try {
    body = JSON.parse(await bodyText(request.clone()));
  } catch {
    return;
  }
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  for (const message of messages) {
    if (!isRecord(message) || typeof message.method !== "string" || !PROPOSING.has(message.method)) continue;
    await logRefusedRequest(gw, { format: "mcp", payload: message, requestId }, error).catch(() => undefined);
  }
}
