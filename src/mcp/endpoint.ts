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
 * - `resources/list`, `resources/templates/list`, `prompts/list`: the upstream servers' resources,
 *   templates and prompts whose governing contract the discovery policy shows this caller, as the
 *   servers described them, plus `_meta["writ/contract"]`.
 * - `resources/read`, `prompts/get`: the whole pipeline, as `tools/call`; the contents and
 *   messages pass as the server sent them (redacted). A refusal is a JSON-RPC error (these
 *   results have no `isError`) with Writ's error in `error.data.error`. `resources/subscribe` is
 *   not offered (Method not found): the endpoint keeps no session to notify.
 */
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
  GetPromptRequestSchema,
  type GetPromptResult,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { Context } from "hono";
import { z } from "zod";
import { readApproval } from "../approvals/index.ts";
import type { CodeMode } from "../codemode/index.ts";
import { WritError, type WritErrorBody } from "../core/errors.ts";
import type { CallObserver } from "../core/handlers.ts";
import { isRecord } from "../core/json.ts";
import { bodyText } from "../core/request-body.ts";
import type { Subject } from "../core/types.ts";
import type { Listed } from "../discovery/index.ts";
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
import { CancellableCalls } from "./cancellation.ts";
import { APPROVAL_META_KEY, ERROR_META_KEY, RESULT_META_KEY } from "./config.ts";
import { answerCall, answerList, plainRequest } from "./fast-path.ts";
import { lazyStream } from "./lazy-stream.ts";
import { cancelledAnswer, errorWithData, sdkErrorData } from "./messages.ts";
import { bearerChallenge } from "./resource-metadata.ts";
import { promptMessages, resourceContents } from "./results.ts";
import { callRunCode, callsRunCode, runCodeTool } from "./run-code.ts";

const SERVER_INFO = { name: "writ", version: "0.1.0" };
/**
 * The JSON Schema validator every per-POST server shares. The SDK would otherwise build a new Ajv
 * (its meta-schemas and formats) for each POST, the largest part of a server's construction; the
 * server uses it for elicitation answers only, which Writ's endpoint never asks for.
 */
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();
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

function decisionOf(outcome: CallOutcome): Record<string, unknown> {
  return { decision: outcome.decision, decision_id: outcome.decision_id, reasons: outcome.reasons };
}

/** A refusal's error; one waiting for approval says how to repeat the request once approved. */
function explained(error: WritErrorBody, outcome: CallOutcome, what: string): WritErrorBody {
  const approval = outcome.approval;
  if (error.category !== "approval_required" || approval === undefined) return error;
  const repeat = `${what} again with the same arguments and _meta {"${APPROVAL_META_KEY}": "${approval.id}"}`;
  return {
    ...error,
    suggested_fix:
      approval.status === "approved"
        ? `${approval.id} is approved: ${repeat}`
        : `ask someone with one of the roles ${approval.approver_roles.join(", ")} to approve ${approval.id}; then ${repeat}`,
  };
}

/** An allowed call that ran and answered nothing: Writ's own failure. */
function noResult(what: string): WritErrorBody {
  return new WritError("internal", `the ${what} was allowed but produced no result`, {
    suggestedFix: "retry later; if it persists, report the decision id to the operator",
  }).toJSON();
}

function fromOutcome(outcome: CallOutcome): CallToolResult {
  const decision = decisionOf(outcome);
  if (outcome.error) {
    if (outcome.error.category === "unknown_tool") {
      throw new McpError(ErrorCode.InvalidParams, outcome.error.message, {
        error: outcome.error,
        ...decision,
      });
    }
    const error = explained(outcome.error, outcome, "call this tool");
    if (outcome.error.category === "tool_error" && outcome.result) {
      return toolFailure(outcome.error, outcome.result, outcome.decision_id);
    }
    return toolError(error, { ...decision, ...(outcome.approval ? { approval: outcome.approval } : {}) });
  }
  if (!outcome.result) {
    return toolError(noResult("call"), decision);
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
  /** Code Mode's `run_code` (absent: not offered). */
  codeMode?: CodeMode | undefined;
}

/** A call refused before it ran, with what the caller may need besides the error. */
class Refused extends Error {
  constructor(
    readonly error: WritErrorBody,
    readonly extra: Record<string, unknown>,
  ) {
    super(error.message);
  }
}

/** An MCP request proposing a call, as the MCP intake format reads it. */
interface ProposedMessage {
  method: "tools/call" | "resources/read" | "prompts/get";
  params: Record<string, unknown>;
}

/**
 * A repeated request naming an approved request: it runs with the grant the approval released.
 * Throws `Refused` when the approval is not the caller's or not approved.
 */
async function runApproved(
  ctx: CallContext,
  message: ProposedMessage,
  approvalId: string,
): Promise<{ result: LayeredResult; decisionId: string | undefined }> {
  const approval = await readApproval(ctx.gw, approvalId, ctx.subject, ctx.requestId);
  const mine = approval.requester.id === ctx.subject.id && approval.requester.tenant === ctx.subject.tenant;
  if (!mine) {
    throw new Refused(
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
          : approval.resolution === "stale_revision"
            ? "stale_revision"
            : "policy_denied";
    throw new Refused(
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
    call: { jsonrpc: "2.0", id: ctx.requestId, ...message },
    requestId: ctx.requestId,
  });
  return { result, decisionId: approval.decision_id };
}

/** The approval a repeated request names in `_meta["writ/approval"]`, if any. */
function approvalOf(meta: Record<string, unknown> | undefined): string | undefined {
  const approvalId = meta?.[APPROVAL_META_KEY];
  if (approvalId === undefined) return undefined;
  if (typeof approvalId !== "string" || approvalId === "") {
    throw new McpError(
      ErrorCode.InvalidParams,
      `_meta["${APPROVAL_META_KEY}"] must be an approval id (a string)`,
    );
  }
  return approvalId;
}

async function callTool(
  ctx: CallContext,
  request: CallToolRequest,
  jsonRpcId: string | number,
): Promise<CallToolResult> {
  const params = request.params;
  const approvalId = approvalOf(params._meta);
  try {
    if (callsRunCode(ctx.codeMode, params.name)) {
      const run = { subject: ctx.subject, requestId: ctx.requestId, signal: ctx.observer.signal };
      return await callRunCode(ctx.codeMode, run, params.arguments);
    }
    if (approvalId !== undefined) {
      const message: ProposedMessage = {
        method: "tools/call",
        params: { name: params.name, arguments: params.arguments ?? {} },
      };
      return await runApproved(ctx, message, approvalId).then(
        ({ result, decisionId }) => success(result, decisionId),
        (error: unknown) => {
          if (error instanceof ToolFailedError) return toolFailure(error.toJSON(), error.result, undefined);
          if (error instanceof Refused) return toolError(error.error, error.extra);
          throw error;
        },
      );
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

/**
 * The JSON-RPC error code of a refused `resources/read` or `prompts/get` (their results have no
 * `isError`): Invalid params (-32602) for what the request itself gets wrong (invalid arguments,
 * a URI or prompt no contract governs: resource not found is -32602 by SEP-2164, which replaced
 * the -32002 the 2025-06-18 and 2025-11-25 specifications suggested), the SDK's request timeout
 * (-32001) for a timeout, Internal error (-32603) for Writ's and the server's failures, and
 * -32000 (a server error, as Writ's Host/Origin refusals) for refusals by policy, approvals and
 * conditions. `error.data.error` is Writ's error either way.
 */
function refusalCode(category: WritErrorBody["category"]): number {
  switch (category) {
    case "invalid_argument":
    case "unknown_tool":
    case "not_found":
      return ErrorCode.InvalidParams;
    case "timeout":
      return ErrorCode.RequestTimeout;
    case "internal":
    case "backend_error":
    case "backend_unavailable":
    case "tool_error":
      return ErrorCode.InternalError;
    default:
      return -32000;
  }
}

/**
 * A refused request as the SDK's server answers it: `{code, message, data}` (an `McpError` would
 * prefix its message with "MCP error <code>: ", which the caller's SDK prefixes once more).
 */
class Refusal extends Error {
  readonly code: number;
  readonly data: Record<string, unknown>;

  constructor(error: WritErrorBody, extra: Record<string, unknown>) {
    super(`${error.category}: ${error.message}`);
    this.code = refusalCode(error.category);
    this.data = { error, ...extra };
  }
}

function refusal(error: WritErrorBody, extra: Record<string, unknown>): Refusal {
  return new Refusal(error, extra);
}

/**
 * A `resources/read` or `prompts/get` through the whole pipeline (or, naming an approval, with
 * the grant it released): the shaped result, or a JSON-RPC error carrying Writ's error.
 */
async function runMessage(
  ctx: CallContext,
  message: ProposedMessage,
  meta: Record<string, unknown> | undefined,
  jsonRpcId: string | number,
): Promise<{ result: LayeredResult; decisionId: string | undefined }> {
  try {
    const approvalId = approvalOf(meta);
    if (approvalId !== undefined) return await runApproved(ctx, message, approvalId);
    const [outcome] = await handleProposal(ctx.gw, {
      authorization: ctx.authorization,
      subject: ctx.subject,
      format: "mcp",
      payload: { jsonrpc: "2.0", id: jsonRpcId, ...message },
      execute: true,
      requestId: ctx.requestId,
    });
    if (outcome === undefined)
      throw new McpError(ErrorCode.InternalError, "the request produced no decision");
    const what = message.method === "resources/read" ? "read the resource" : "get the prompt";
    const extra = { ...decisionOf(outcome), ...(outcome.approval ? { approval: outcome.approval } : {}) };
    if (outcome.error) throw refusal(explained(outcome.error, outcome, what), extra);
    if (!outcome.result) {
      throw refusal(noResult("request"), extra);
    }
    return { result: outcome.result, decisionId: outcome.decision_id };
  } catch (error) {
    if (error instanceof McpError || error instanceof Refusal) throw error;
    if (error instanceof Refused) throw refusal(error.error, error.extra);
    throw refusal(asErrorBody(error), {});
  }
}

function jsonRpcError(
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

/**
 * Whether this POST's answer may be a stream: a `tools/call` from a caller that accepts
 * `text/event-stream` is answered as Server-Sent Events once the call sends progress or log
 * messages, or runs long (lazy-stream.ts); everything else (and a caller accepting JSON only)
 * gets JSON.
 */
function answersAsStream(body: unknown, accept: string | undefined): boolean {
  // A batch (which MCP no longer defines) is answered as JSON, whatever it holds.
  return (
    !Array.isArray(body) && accept?.includes("text/event-stream") === true && carries(body, "tools/call")
  );
}

/** Whether a POST's body (one message or a batch) has a request (a message with an id and a method). */
function hasRequests(body: unknown): boolean {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.some((m) => isRecord(m) && typeof m.method === "string" && "id" in m);
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

/** An upstream resource, template or prompt as listed to a caller: as the server described it, plus its contract. */
function withContract<T extends { _meta?: Record<string, unknown> }>({ item, contract }: Listed<T>): T {
  return { ...item, _meta: { ...item._meta, "writ/contract": contract } };
}

const errorMessageSchema = z
  .object({ error: z.object({ code: z.number(), message: z.string() }).passthrough() })
  .passthrough();

/**
 * Every message the server sends on `transport` with Writ's error as `data` of each JSON-RPC
 * error the SDK answered by itself (an unknown method, a handler's protocol error), so that every
 * error a caller sees on `/mcp` is structured, without reading the answers back.
 */
function sendingErrorData(transport: WebStandardStreamableHTTPServerTransport): void {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => send(errorWithData(message), options);
}

/**
 * The transport's own refusals (an unsupported protocol version or media type: statuses of 400
 * and up, written without `send`) with Writ's error as `data`. Streams and successful answers,
 * whose messages went through `sendingErrorData`, pass as they are.
 */
async function withErrorData(response: Response): Promise<Response> {
  if (response.status < 300 || !response.headers.get("content-type")?.includes("application/json"))
    return response;
  const text = await response.text();
  let changed = false;
  const enrich = (message: unknown): unknown => {
    const parsed = errorMessageSchema.safeParse(message);
    if (!parsed.success || parsed.data.error.data !== undefined) return message;
    changed = true;
    const { code, message: said } = parsed.data.error;
    return { ...parsed.data, error: { ...parsed.data.error, data: sdkErrorData(code, said) } };
  };
  let body: unknown;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  const enriched = Array.isArray(body) ? body.map(enrich) : body === undefined ? undefined : enrich(body);
  return new Response(changed ? JSON.stringify(enriched) : text, {
    status: response.status,
    headers: response.headers,
  });
}

/** The hono handler for `/mcp`. */
/** Set by the app's `requestId()` middleware, which runs before the endpoint. */
type McpEnv = { Variables: { requestId: string } };

export function mcpEndpoint(
  gw: Gateway,
  discovery: ToolDiscovery,
  codeMode?: CodeMode,
): (c: Context<McpEnv>) => Promise<Response> {
  const cancellable = new CancellableCalls(gw.store);
  /** The tools `subject` sees: the discovered ones, and `run_code` when the policy lets it run code. */
  const listTools = (subject: Subject): Tool[] => {
    const tools = discovery.list(subject, "mcp").map(mcpTool);
    return codeMode?.offered(subject, "mcp") ? [...tools, runCodeTool(codeMode, subject)] : tools;
  };
  return async (c) => {
    if (c.req.method !== "POST") {
      const error = new WritError(
        "invalid_argument",
        `Writ's MCP endpoint is stateless and answers POST only, not ${c.req.method}`,
        { suggestedFix: "send each JSON-RPC message in a POST; there is no session to open or delete" },
      );
      return jsonRpcError(405, ErrorCode.ConnectionClosed, error, { allow: "POST" });
    }
    const authorization = c.req.header("authorization");
    let subject: Subject;
    try {
      subject = await gw.identity.verify(authorization, {
        resource: gw.identity.protectedResource?.resource,
      });
    } catch (error) {
      await logRefusedCalls(gw, c.req.raw, error, c.var.requestId);
      const body = asErrorBody(error);
      const refusal = authorization === undefined ? undefined : { description: body.message };
      const challenge = bearerChallenge(c.req.url, gw.identity.protectedResource, refusal);
      return new Response(JSON.stringify(body), {
        status: 401,
        headers: { "content-type": "application/json", "www-authenticate": challenge },
      });
    }
    const requestId = c.var.requestId;
    const body = await readMcpBody(gw, c.req.raw, requestId);
    if (!body.ok) return body.response;
    const stream = answersAsStream(body.messages, c.req.header("accept"));
    // A plain tools/call or tools/list is answered without an SDK server, as one would (fast-path.ts).
    const plain = plainRequest(c.req.raw, body);
    if (plain?.method === "tools/list") {
      return answerList(plain.id, () => listTools(subject));
    }
    if (plain?.method === "tools/call") {
      return answerCall({
        id: plain.id,
        stream,
        run: (observer) =>
          callTool({ gw, subject, authorization, requestId, observer, codeMode }, plain.request, plain.id),
        cancellable: (cancel) => cancellable.add(subject, plain.id, cancel),
      });
    }
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: { listChanged: false }, resources: {}, prompts: {}, logging: {} },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: SCHEMA_VALIDATOR,
    });
    // A stream is opened only when the call needs one (see lazy-stream.ts): JSON mode either way.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    const lazy = stream ? lazyStream(transport) : undefined;
    // After lazyStream: a stream gets the messages with their error data too.
    sendingErrorData(transport);
    // The server closes once no call runs any more (closing earlier would abort them).
    let running = 0;
    let idle: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      idle = resolve;
    });
    /** Runs `handle` as a running call: the server stays open until it answered. */
    const tracked = async <T>(handle: () => Promise<T>): Promise<T> => {
      running += 1;
      try {
        return await handle();
      } finally {
        running -= 1;
        if (running === 0) idle();
      }
    };
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: listTools(subject),
    }));
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({
      resources: discovery.resources(subject).map(withContract),
    }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
      resourceTemplates: discovery.templates(subject).map(withContract),
    }));
    server.setRequestHandler(ListPromptsRequestSchema, async () => ({
      prompts: discovery.prompts(subject).map(withContract),
    }));
    const ctx = { gw, subject, authorization, requestId, observer: {} };
    server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
      tracked(async (): Promise<ReadResourceResult> => {
        const message: ProposedMessage = { method: "resources/read", params: { uri: request.params.uri } };
        const ran = await runMessage(ctx, message, request.params._meta, extra.requestId);
        return { contents: resourceContents(ran.result), _meta: resultMeta(ran.result, ran.decisionId) };
      }),
    );
    server.setRequestHandler(GetPromptRequestSchema, (request, extra) =>
      tracked(async (): Promise<GetPromptResult> => {
        const { name, arguments: args } = request.params;
        const message: ProposedMessage = {
          method: "prompts/get",
          params: { name, ...(args === undefined ? {} : { arguments: args }) },
        };
        const ran = await runMessage(ctx, message, request.params._meta, extra.requestId);
        return { ...promptMessages(ran.result), _meta: resultMeta(ran.result, ran.decisionId) };
      }),
    );
    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      tracked(async () => {
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
            { gw, subject, authorization, requestId, observer, codeMode },
            request,
            extra.requestId,
          );
          await observer.flushed();
          return answer;
        } finally {
          forget();
          // The SDK sends nothing for a cancelled request, but an HTTP request needs an end.
          if (extra.signal.aborted)
            void transport.send(cancelledAnswer(extra.requestId)).catch(() => undefined);
        }
      }),
    );
    // A cancellation comes in a POST of its own: it is handed to the server running the call,
    // where the SDK's own handling aborts the call and withholds its answer.
    // Only in a POST of notifications alone: in one that also runs calls, the SDK's own handling
    // must stay (a cancellation handed over to this server would otherwise come back here).
    if (carries(body.messages, "notifications/cancelled") && !hasRequests(body.messages)) {
      server.setNotificationHandler(CancelledNotificationSchema, ({ params }) => {
        if (params.requestId !== undefined)
          return cancellable.cancel(subject, params.requestId, params.reason);
      });
    }
    await server.connect(transport);
    let response: Response;
    try {
      const answered = transport.handleRequest(acceptingBoth(c.req.raw), { parsedBody: body.messages });
      if (lazy === undefined) {
        response = await answered;
      } else {
        // Once the answer is a stream, the transport's JSON answer is not used.
        answered.catch(() => undefined);
        response = await Promise.race([answered, lazy.opened]);
        lazy.settle();
      }
    } catch (error) {
      lazy?.settle();
      await server.close();
      throw error;
    }
    // Calls start in microtasks of handleRequest; a POST that started none is finished already.
    setImmediate(() => {
      if (running === 0) idle();
    });
    // Once the last call answered (its response is sent after the handler returns), close.
    void finished.then(() => new Promise((resolve) => setImmediate(resolve))).then(() => server.close());
    return withErrorData(response);
  };
}
