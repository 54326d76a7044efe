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
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  CancelledNotificationSchema,
  type ContentBlock,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import { readApproval } from "../approvals/index.ts";
import { WritError, type WritErrorBody } from "../core/errors.ts";
import type { CallObserver } from "../core/handlers.ts";
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
import { ToolFailedError } from "../results/index.ts";
import { readMcpBody } from "./body.ts";
import { APPROVAL_META_KEY, ERROR_META_KEY, RESULT_META_KEY } from "./config.ts";
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

/** Writ's part of an answer: provenance, redactions and the decision, under `_meta["writ/result"]`. */
function resultMeta(result: LayeredResult, decisionId: string | undefined): Record<string, unknown> {
  return {
    [RESULT_META_KEY]: {
      summary: result.summary,
      provenance: result.provenance,
      execution_meta: result.execution_meta,
      ...(result.redacted === undefined ? {} : { redacted: result.redacted }),
      ...(decisionId === undefined ? {} : { decision_id: decisionId }),
    },
  };
}

/**
 * A result as MCP content. An MCP server's content items pass as it sent them (redacted), with
 * its `structuredContent` when it sent one; a result withheld whole says so in a text item. A
 * result of any other backend is its structured content, serialized in a text item too.
 */
function success(result: LayeredResult, decisionId: string | undefined): CallToolResult {
  const meta = resultMeta(result, decisionId);
  if (result.content === undefined) {
    return {
      content: [{ type: "text", text: JSON.stringify(result.structured_content) }],
      structuredContent: result.structured_content,
      _meta: meta,
    };
  }
  const withheld = (result.redacted ?? []).find((r) => r.startsWith("classification:"));
  const content: ContentBlock[] =
    withheld !== undefined && result.content.length === 0
      ? [{ type: "text", text: `(withheld: the result's ${withheld.replace(":", " is ")})` }]
      : result.content;
  return {
    content,
    ...(Object.keys(result.structured_content).length === 0
      ? {}
      : { structuredContent: result.structured_content }),
    _meta: meta,
  };
}

/** A tool that reported its own failure: its content as it sent it, Writ's error in `_meta`. */
function toolFailure(
  error: WritErrorBody,
  result: LayeredResult,
  decisionId: string | undefined,
): CallToolResult {
  return {
    ...success(result, decisionId),
    isError: true,
    _meta: { ...resultMeta(result, decisionId), [ERROR_META_KEY]: error },
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
    if (outcome.error.category === "tool_error" && outcome.result) {
      return toolFailure(outcome.error, outcome.result, outcome.decision_id);
    }
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
  /** Progress and log messages for a caller reading the answer as a stream; its cancellation. */
  observer: CallObserver;
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
    subject: ctx.subject,
    observer: ctx.observer,
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
      return await callApproved(ctx, params, approvalId).catch((error: unknown) => {
        if (error instanceof ToolFailedError) return toolFailure(error.toJSON(), error.result, undefined);
        throw error;
      });
    }
    const outcomes = await handleProposal(ctx.gw, {
      authorization: ctx.authorization,
      subject: ctx.subject,
      observer: ctx.observer,
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

/**
 * The calls running on this instance that a caller may cancel, by tenant, subject and JSON-RPC
 * id: a `notifications/cancelled` arrives in a POST of its own (the endpoint keeps no session),
 * so it is delivered to the server instance that runs the call, as if it had come there.
 */
class CancellableCalls {
  readonly #calls = new Map<string, (reason: string | undefined) => void>();

  static #key(subject: Subject, id: string | number): string {
    return JSON.stringify([subject.tenant, subject.id, id]);
  }

  add(subject: Subject, id: string | number, cancel: (reason: string | undefined) => void): () => void {
    const key = CancellableCalls.#key(subject, id);
    this.#calls.set(key, cancel);
    return () => {
      if (this.#calls.get(key) === cancel) this.#calls.delete(key);
    };
  }

  cancel(subject: Subject, id: string | number, reason: string | undefined): void {
    this.#calls.get(CancellableCalls.#key(subject, id))?.(reason);
  }
}

/**
 * Whether this POST's answer is a stream: a `tools/call` from a caller that accepts
 * `text/event-stream` is answered as Server-Sent Events, so that progress and log messages reach
 * it while the call runs; everything else (and a caller accepting JSON only) gets JSON.
 */
function answersAsStream(body: unknown, accept: string | undefined): boolean {
  return accept?.includes("text/event-stream") === true && carries(body, "tools/call");
}

/** Whether a POST's body (one message or a batch) has a message calling `method`. */
function carries(body: unknown, method: string): boolean {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.some((m) => isRecord(m) && m.method === method);
}

/**
 * The SDK's transport insists that a POST accept both JSON and SSE; Writ also serves callers that
 * accept JSON only (or say nothing), answering them with JSON. The body was read already (it is
 * handed over parsed), so the copy carries none.
 */
function acceptingBoth(request: Request): Request {
  const accept = request.headers.get("accept");
  if (accept?.includes("application/json") && accept.includes("text/event-stream")) return request;
  const headers = new Headers(request.headers);
  headers.set("accept", "application/json, text/event-stream");
  return new Request(request.url, { method: request.method, headers });
}

/**
 * The observer of a `tools/call`: progress to the caller's token, log messages, the SDK's
 * cancellation. Notifications leave in order; `flushed()` resolves once all sent have left, so
 * that none is overtaken by the answer (which closes the stream).
 */
function observerOf(
  request: CallToolRequest,
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
): CallObserver & { flushed(): Promise<void> } {
  const token = request.params._meta?.progressToken;
  let queue = Promise.resolve();
  const send = (notification: ServerNotification) => {
    queue = queue.then(() => extra.sendNotification(notification)).catch(() => undefined);
  };
  return {
    signal: extra.signal,
    ...(token === undefined
      ? {}
      : {
          progress: (update) =>
            send({ method: "notifications/progress", params: { progressToken: token, ...update } }),
        }),
    log: (message) => send({ method: "notifications/message", params: message }),
    flushed: () => queue,
  };
}

/** The hono handler for `/mcp`. */
export function mcpEndpoint(gw: Gateway, discovery: ToolDiscovery): (c: Context) => Promise<Response> {
  const cancellable = new CancellableCalls();
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
    const stream = answersAsStream(body.messages, c.req.header("accept"));
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: { listChanged: false }, logging: {} },
      instructions: INSTRUCTIONS,
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !stream,
    });
    // The server closes once no call runs any more (closing earlier would abort them).
    let running = 0;
    let idle: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      idle = resolve;
    });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: discovery.list(subject, "mcp").map(mcpTool),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      running += 1;
      const forget = cancellable.add(subject, extra.requestId, (reason) => {
        void transport.onmessage?.({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: extra.requestId, ...(reason === undefined ? {} : { reason }) },
        });
      });
      try {
        const observer = observerOf(request, extra);
        const answer = await callTool(
          { gw, subject, authorization, requestId, observer },
          request,
          extra.requestId,
        );
        await observer.flushed();
        return answer;
      } finally {
        forget();
        running -= 1;
        if (running === 0) idle();
      }
    });
    // A cancellation comes in a POST of its own: it is handed to the server running the call,
    // where the SDK's own handling aborts the call and withholds its answer.
    if (carries(body.messages, "notifications/cancelled")) {
      server.setNotificationHandler(CancelledNotificationSchema, ({ params }) => {
        if (params.requestId !== undefined) cancellable.cancel(subject, params.requestId, params.reason);
      });
    }
    await server.connect(transport);
    let response: Response;
    try {
      response = await transport.handleRequest(acceptingBoth(c.req.raw), { parsedBody: body.messages });
    } catch (error) {
      await server.close();
      throw error;
    }
    // Calls start in microtasks of handleRequest; a POST that started none is finished already.
    setImmediate(() => {
      if (running === 0) idle();
    });
    // Once the last call answered (its response is sent after the handler returns), close.
    void finished.then(() => new Promise((resolve) => setImmediate(resolve))).then(() => server.close());
    return response;
  };
}
