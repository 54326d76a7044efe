/**
 * Reading a `/mcp` POST body as the HTTP API reads its bodies: strict JSON (no repeated key, no
 * `__proto__` key, anywhere; see src/intake/lib/strict-json.ts), and a `tools/call` checked by the
 * same MCP intake adapter `/v1/proposals` uses. What is refused is answered here as JSON-RPC:
 *
 * - `-32700` Parse error: the body is not JSON;
 * - `-32600` Invalid Request: not a JSON-RPC 2.0 message, an empty batch, or a refused key outside
 *   a `tools/call`'s params;
 * - `-32602` Invalid params: a `tools/call` whose params are malformed, including refused keys in
 *   its arguments.
 *
 * `error.data` is the structured WritError (field errors as JSON Pointers into the body). A refused
 * `tools/call` is logged like any refused proposal. What passes goes to the SDK's transport as
 * `handleRequest(request, {parsedBody})`, and a `tools/call`'s calls, read here, to intake.
 */
import {
  type CallToolRequest,
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import { isRecord } from "../core/json.ts";
import { bodyText } from "../core/request-body.ts";
import type { ProposedCall } from "../core/types.ts";
import {
  KEY_PROBLEM_FIX,
  type KeyProblem,
  keyFieldErrors,
  parseProposal,
  parseStrictJson,
} from "../intake/index.ts";
import { type Gateway, logRefusedRequest } from "../pipeline/index.ts";

/**
 * A body that passed: its messages as parsed and, when it is one `tools/call` request, that
 * request as the SDK's schema reads it (what the SDK's server would hand its handler) and the
 * calls the MCP intake adapter read from it (what intake takes as they are).
 */
export type McpBody =
  | { ok: true; messages: unknown; call?: CallToolRequest; proposed?: ProposedCall[] }
  | { ok: false; response: Response };

interface Refusal {
  code: number;
  error: WritError;
  /** The refused `tools/call`, logged as a refused proposal. */
  call?: Record<string, unknown>;
}

/** What one message's check found: a refusal, or (a `tools/call` passing) the request and its calls as read. */
type Checked =
  | { refusal: Refusal; call?: undefined }
  | { refusal?: undefined; call?: { request: CallToolRequest; proposed: ProposedCall[] } };

const MESSAGE_FIX =
  'send one JSON-RPC 2.0 message per POST: {"jsonrpc": "2.0", "id": 1, "method": "…", "params": {…}}';

function idOf(message: unknown, base: string, problems: readonly KeyProblem[]): string | number | null {
  if (!isRecord(message) || problems.some((problem) => problem.pointer === `${base}/id`)) return null;
  const id = message.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/** Why one message of the body is refused, or, when it passes, the `tools/call` it is. */
function checkMessage(message: unknown, base: string, problems: readonly KeyProblem[]): Checked {
  if (!JSONRPCMessageSchema.safeParse(message).success) {
    return {
      refusal: {
        code: ErrorCode.InvalidRequest,
        error: new WritError("invalid_argument", "the body is not a JSON-RPC 2.0 message", {
          fieldErrors: [{ path: base, message: "expected a JSON-RPC 2.0 request, notification or response" }],
          suggestedFix: MESSAGE_FIX,
        }),
      },
    };
  }
  const call = isRecord(message) && message.method === "tools/call" && "id" in message ? message : undefined;
  const own = problems.filter((problem) => base === "" || problem.pointer.startsWith(`${base}/`));
  if (own.length > 0) {
    const inParams =
      call !== undefined && own.every((problem) => problem.pointer.startsWith(`${base}/params/`));
    const fieldErrors = keyFieldErrors(own);
    return {
      refusal: {
        code: inParams ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest,
        error: new WritError(
          "invalid_argument",
          `the ${call === undefined ? "JSON-RPC message" : "tools/call request"} repeats a key or uses "__proto__" (first at ${fieldErrors[0]?.path})`,
          { fieldErrors, suggestedFix: KEY_PROBLEM_FIX },
        ),
        ...(call === undefined ? {} : { call }),
      },
    };
  }
  if (call === undefined) {
    const refusal = checkParams(message, base);
    return refusal === undefined ? {} : { refusal };
  }
  let proposed: ProposedCall[];
  try {
    proposed = parseProposal("mcp", call).calls;
  } catch (thrown) {
    const error = WritError.from(thrown);
    return {
      refusal: {
        code: ErrorCode.InvalidParams,
        error: new WritError(error.category, error.message, {
          fieldErrors: error.fieldErrors.map((field) => ({ ...field, path: `${base}${field.path}` })),
          suggestedFix: error.suggestedFix,
        }),
        call,
      },
    };
  }
  // What the intake format lets pass must also be a tools/call the SDK's server accepts; as its
  // schema reads it, it is what the SDK's server would hand its handler.
  const parsed = CallToolRequestSchema.safeParse(message);
  if (!parsed.success) return { refusal: { ...malformedParams("tools/call", parsed.error, base), call } };
  return { call: { request: parsed.data, proposed } };
}

/** The requests Writ's endpoint answers (other than tools/call), by the SDK's schema for each. */
const REQUEST_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "resources/list": ListResourcesRequestSchema,
  "resources/templates/list": ListResourceTemplatesRequestSchema,
  "resources/read": ReadResourceRequestSchema,
  "resources/subscribe": SubscribeRequestSchema,
  "resources/unsubscribe": UnsubscribeRequestSchema,
  "prompts/list": ListPromptsRequestSchema,
  "prompts/get": GetPromptRequestSchema,
  "logging/setLevel": SetLevelRequestSchema,
  "completion/complete": CompleteRequestSchema,
};

/** A request whose params its method's schema refuses: -32602, with the field errors. */
function checkParams(message: unknown, base: string): Refusal | undefined {
  if (!isRecord(message) || !("id" in message) || typeof message.method !== "string") return undefined;
  const schema = Object.hasOwn(REQUEST_SCHEMAS, message.method) ? REQUEST_SCHEMAS[message.method] : undefined;
  const parsed = schema?.safeParse(message);
  if (parsed === undefined || parsed.success) return undefined;
  return malformedParams(message.method, parsed.error, base);
}

function malformedParams(method: string, error: z.ZodError, base: string): Refusal {
  return {
    code: ErrorCode.InvalidParams,
    error: new WritError("invalid_argument", `the params of ${method} are malformed`, {
      fieldErrors: fieldErrorsFromZod(error, base),
      suggestedFix: `send ${method} with params as the MCP specification defines them`,
    }),
  };
}

function errorMessage(code: number): string {
  if (code === ErrorCode.ParseError) return "Parse error";
  if (code === ErrorCode.InvalidParams) return "Invalid params";
  return "Invalid Request";
}

function errorResponse(id: string | number | null, code: number, error: WritError) {
  return {
    jsonrpc: "2.0",
    id,
    error: { code, message: `${errorMessage(code)}: ${error.message}`, data: error.toJSON() },
  };
}

function reply(status: number, body: unknown): McpBody {
  return {
    ok: false,
    response: new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json" },
    }),
  };
}

/**
 * The body of a `/mcp` POST, strictly read and checked, or the JSON-RPC error that answers it.
 * In a batch with a refused message, no message runs: the others are answered `-32600` too.
 */
export async function readMcpBody(gw: Gateway, request: Request, requestId: string): Promise<McpBody> {
  let text: string;
  try {
    text = await bodyText(request);
  } catch (error) {
    // Not UTF-8, or not whole: a JSON-RPC parse error, as a body that is not JSON.
    return reply(400, errorResponse(null, ErrorCode.ParseError, WritError.from(error)));
  }
  const parsed = parseStrictJson(text);
  if (!parsed.ok && parsed.reason === "syntax") {
    const error = new WritError("invalid_argument", "the body is not JSON", {
      fieldErrors: [{ path: "", message: parsed.message }],
      suggestedFix: MESSAGE_FIX,
    });
    return reply(400, errorResponse(null, ErrorCode.ParseError, error));
  }
  const value = parsed.value;
  const problems = parsed.ok ? [] : parsed.problems;
  const messages: unknown[] = Array.isArray(value) ? value : [value];
  if (messages.length === 0) {
    const error = new WritError("invalid_argument", "the body is an empty batch", {
      suggestedFix: MESSAGE_FIX,
    });
    return reply(400, errorResponse(null, ErrorCode.InvalidRequest, error));
  }
  const bases = messages.map((_, index) => (Array.isArray(value) ? `/${index}` : ""));
  const checked = messages.map((message, index) => checkMessage(message, bases[index] ?? "", problems));
  const refusals = checked.map((check) => check.refusal);
  if (refusals.every((refusal) => refusal === undefined)) {
    const [first] = checked;
    const call = Array.isArray(value) ? undefined : first?.call;
    if (call === undefined) return { ok: true, messages: value };
    return { ok: true, messages: value, call: call.request, proposed: call.proposed };
  }

  for (const refusal of refusals) {
    if (refusal?.call === undefined) continue;
    await logRefusedRequest(gw, { format: "mcp", payload: refusal.call, requestId }, refusal.error).catch(
      () => undefined,
    );
  }
  const notRun = new WritError("invalid_argument", "another message in this batch was refused", {
    suggestedFix: "fix the refused messages (see their errors) and send the batch again",
  });
  const responses = messages.flatMap((message, index) => {
    const refusal = refusals[index];
    const id = idOf(message, bases[index] ?? "", problems);
    if (refusal !== undefined) return [errorResponse(id, refusal.code, refusal.error)];
    return id === null ? [] : [errorResponse(id, ErrorCode.InvalidRequest, notRun)];
  });
  const status = refusals.every(
    (refusal) => refusal === undefined || refusal.code === ErrorCode.InvalidParams,
  )
    ? 200
    : 400;
  return reply(status, Array.isArray(value) ? responses : responses[0]);
}
