/**
 * Writ's MCP endpoint (`/mcp`, Streamable HTTP, stateless: every POST carries the caller's
 * bearer JWT and is authenticated exactly as the HTTP API's requests are).
 *
 * - `tools/list`: the tools the discovery policy lets this caller see, in the registry's stable
 *   order, each as its contract's MCP view. Annotations come from the contract (side effect,
 *   idempotency), never from an upstream server's hints.
 * - `tools/call`: the whole pipeline with `execute`: normalization, policy, approval, conditions,
 *   grant, dispatch, result. Refusals the model can act on (invalid arguments, denials, pending
 *   approvals, backend failures) are tool execution errors (`isError: true`) carrying the
 *   structured error in `structuredContent`; an unknown tool is a protocol error. After an
 *   approval, the caller repeats the call with `_meta: {"writ/approval": "<id>"}` and it runs
 *   with the released grant.
 */
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import { readApproval } from "../approvals/index.ts";
import { WritError, type WritErrorBody } from "../core/errors.ts";
import { isRecord } from "../core/json.ts";
import type { Subject } from "../core/types.ts";
import {
  type CallOutcome,
  type DiscoveredTool,
  executeWithGrant,
  type Gateway,
  handleProposal,
  type LayeredResult,
  logRefusedRequest,
  type ToolDiscovery,
} from "../pipeline/index.ts";
import { readMcpBody } from "./body.ts";
import { APPROVAL_META_KEY, RESULT_META_KEY } from "./config.ts";
import { bearerChallenge } from "./resource-metadata.ts";

const SERVER_INFO = { name: "writ", version: "0.1.0" };
const INSTRUCTIONS =
  'Writ authorizes every tool call against policy. A refused call answers with isError and a structured error (category, message, suggested_fix): follow the fix. A call that needs approval answers approval_required with an approval id; once it is approved, call the same tool with the same arguments and _meta {"writ/approval": "<id>"}.';

/**
 * The MCP view of a discovered tool; hints follow the contract, not the upstream server. No
 * `outputSchema` is advertised: Writ checks results against the contract's output schema
 * itself, and clients validate `structuredContent` against an advertised schema even on
 * `isError` results, which would hide the structured error the model needs.
 */
function mcpTool(tool: DiscoveredTool): Tool {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: { ...tool.input_schema, type: "object" },
    annotations: {
      readOnlyHint: tool.contract.side_effect === "none",
      destructiveHint: tool.contract.side_effect === "committing",
      idempotentHint: tool.contract.idempotency !== "none",
    },
    _meta: { "writ/contract": { name: tool.contract.name, version: tool.contract.version } },
  };
}

function toolError(
  error: WritErrorBody,
  extra: {
    decision?: CallOutcome["decision"];
    decision_id?: string;
    reasons?: CallOutcome["reasons"];
    approval?: unknown;
  },
): CallToolResult {
  return {
    isError: true,
    content: [
      { type: "text", text: `${error.category}: ${error.message}\nwhat to do: ${error.suggested_fix}` },
    ],
    structuredContent: { error, ...extra },
  };
}

function success(result: LayeredResult, decisionId: string | undefined): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(result.structured_content) }],
    structuredContent: result.structured_content,
    _meta: {
      [RESULT_META_KEY]: {
        summary: result.summary,
        provenance: result.provenance,
        execution_meta: result.execution_meta,
        ...(result.redacted === undefined ? {} : { redacted: result.redacted }),
        ...(decisionId === undefined ? {} : { decision_id: decisionId }),
      },
    },
  };
}

function fromOutcome(outcome: CallOutcome): CallToolResult {
  const decision = {
    decision: outcome.decision,
    decision_id: outcome.decision_id,
    reasons: outcome.reasons,
  };
  if (outcome.error) {
    if (outcome.error.category === "unknown_tool") {
      throw new McpError(ErrorCode.InvalidParams, outcome.error.message, {
        error: outcome.error,
        ...decision,
      });
    }
    const error =
      outcome.error.category === "approval_required" && outcome.approval
        ? {
            ...outcome.error,
            suggested_fix: `ask someone with one of the roles ${outcome.approval.approver_roles.join(", ")} to approve ${outcome.approval.id}; then call this tool again with the same arguments and _meta {"${APPROVAL_META_KEY}": "${outcome.approval.id}"}`,
          }
        : outcome.error;
    return toolError(error, { ...decision, ...(outcome.approval ? { approval: outcome.approval } : {}) });
  }
  if (!outcome.result) {
    return toolError(
      new WritError("internal", "the call was allowed but produced no result", {
        suggestedFix: "retry later; if it persists, report the decision id to the operator",
      }).toJSON(),
      decision,
    );
  }
  return success(outcome.result, outcome.decision_id);
}

function asErrorBody(error: unknown): WritErrorBody {
  return WritError.from(error, {
    message: "Writ failed while handling the call",
    suggestedFix: "retry later; if it persists, tell the operator the time of the request",
  }).toJSON();
}

interface CallContext {
  gw: Gateway;
  subject: Subject;
  authorization: string | undefined;
  requestId: string;
}

/** A repeated call naming an approved request: it runs with the grant the approval released. */
async function callApproved(
  ctx: CallContext,
  params: CallToolRequest["params"],
  approvalId: string,
): Promise<CallToolResult> {
  const approval = await readApproval(ctx.gw, approvalId, ctx.subject, ctx.requestId);
  const mine = approval.requester.id === ctx.subject.id && approval.requester.tenant === ctx.subject.tenant;
  if (!mine) {
    return toolError(
      new WritError("forbidden", `approval ${approvalId} was requested by someone else`, {
        suggestedFix: "only the requester runs an approved call; propose the call yourself",
      }).toJSON(),
      {},
    );
  }
  if (approval.status !== "approved" || !approval.grant) {
    const category =
      approval.status === "pending"
        ? "approval_required"
        : approval.status === "expired"
          ? "approval_expired"
          : "policy_denied";
    return toolError(
      new WritError(
        category,
        `approval ${approvalId} is ${approval.status}${approval.resolution ? ` (${approval.resolution})` : ""}`,
        {
          suggestedFix:
            approval.status === "pending"
              ? `wait until someone with one of the roles ${approval.approver_roles.join(", ")} decides it, then call again`
              : "propose the call again without the approval id",
        },
      ).toJSON(),
      { approval: { id: approval.id, status: approval.status } },
    );
  }
  const { result } = await executeWithGrant(ctx.gw, {
    authorization: ctx.authorization,
    grant: approval.grant.token,
    format: "mcp",
    call: {
      jsonrpc: "2.0",
      id: ctx.requestId,
      method: "tools/call",
      params: { name: params.name, arguments: params.arguments ?? {} },
    },
    requestId: ctx.requestId,
  });
  return success(result, approval.decision_id);
}

async function callTool(
  ctx: CallContext,
  request: CallToolRequest,
  jsonRpcId: string | number,
): Promise<CallToolResult> {
  const params = request.params;
  const approvalId = params._meta?.[APPROVAL_META_KEY];
  try {
    if (approvalId !== undefined) {
      if (typeof approvalId !== "string" || approvalId === "") {
        throw new McpError(
          ErrorCode.InvalidParams,
          `_meta["${APPROVAL_META_KEY}"] must be an approval id (a string)`,
        );
      }
      return await callApproved(ctx, params, approvalId);
    }
    const outcomes = await handleProposal(ctx.gw, {
      authorization: ctx.authorization,
      format: "mcp",
      payload: {
        jsonrpc: "2.0",
        id: jsonRpcId,
        method: "tools/call",
        params: {
          name: params.name,
          ...(params.arguments === undefined ? {} : { arguments: params.arguments }),
        },
      },
      execute: true,
      requestId: ctx.requestId,
    });
    const [outcome] = outcomes;
    if (outcome === undefined) throw new McpError(ErrorCode.InternalError, "the call produced no decision");
    return fromOutcome(outcome);
  } catch (error) {
    if (error instanceof McpError) throw error;
    return toolError(asErrorBody(error), {});
  }
}

function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/**
 * Tool calls refused for want of a valid token are in the decision log like any refused
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
    body = await request.clone().json();
  } catch {
    return;
  }
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  for (const message of messages) {
    if (!isRecord(message) || message.method !== "tools/call") continue;
    await logRefusedRequest(gw, { format: "mcp", payload: message, requestId }, error).catch(() => undefined);
  }
}

/** The hono handler for `/mcp`. */
export function mcpEndpoint(gw: Gateway, discovery: ToolDiscovery): (c: Context) => Promise<Response> {
  return async (c) => {
    if (c.req.method !== "POST") {
      return jsonRpcError(
        405,
        ErrorCode.ConnectionClosed,
        "Writ's MCP endpoint is stateless: send each JSON-RPC message in a POST",
        {
          allow: "POST",
        },
      );
    }
    const authorization = c.req.header("authorization");
    let subject: Subject;
    try {
      subject = await gw.identity.verify(authorization, {
        resource: gw.identity.protectedResource?.resource,
      });
    } catch (error) {
      await logRefusedCalls(gw, c.req.raw, error, c.req.header("x-request-id") ?? randomUUID());
      const body = asErrorBody(error);
      const refusal = authorization === undefined ? undefined : { description: body.message };
      const challenge = bearerChallenge(c.req.url, gw.identity.protectedResource, refusal);
      return new Response(JSON.stringify(body), {
        status: 401,
        headers: { "content-type": "application/json", "www-authenticate": challenge },
      });
    }
    const requestId = c.req.header("x-request-id") ?? randomUUID();
    const body = await readMcpBody(gw, c.req.raw, requestId);
    if (!body.ok) return body.response;
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: { listChanged: false } },
      instructions: INSTRUCTIONS,
    });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: discovery.list(subject, "mcp").map(mcpTool),
    }));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      callTool({ gw, subject, authorization, requestId }, request, extra.requestId),
    );
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw, { parsedBody: body.messages });
    } finally {
      await server.close();
    }
  };
}
