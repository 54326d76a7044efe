/**
 * The 2026-07-28 revision on `/mcp`: stateless, no `initialize`, every request carrying its
 * `_meta` envelope (`io.modelcontextprotocol/protocolVersion`, `clientInfo`,
 * `clientCapabilities`). Whether a POST is one is the v2 SDK's own classification
 * (`isLegacyRequest`, on the body endpoint.ts read already; a plain 2025-era request is told
 * without it, `namesNoModernRevision`); a plain `tools/call` is answered by Writ itself, with the
 * bytes the SDK would send (modern-fast-path.ts), any other such POST is served by the v2
 * SDK's entry (`createMcpHandler`, `legacy: "reject"`), which answers the revision's ladder
 * itself (an unsupported revision -32022 with the supported list, headers disagreeing with the
 * body -32020, a missing client capability -32021, `server/discover`; `Mcp-Param-*` headers
 * disagreeing with a `tools/call`'s arguments, which it checks for an `McpServer`'s tools only,
 * are refused -32020 before it by param-headers.ts) and builds one v2 `Server`
 * per request, on which each method's module registers its `modern` handler (methods/index.ts):
 * the handlers 2025-11-25 runs, so the two revisions cannot drift. The SDK stamps `resultType`,
 * and `ttlMs`/`cacheScope` on the cacheable results (initialize.ts's cache hints).
 *
 * What comes before is the endpoint's, for both revisions: Host and Origin, the caller's token
 * (a 401 with the RFC 9728 challenge), the strict body, the audit interceptor. Every JSON-RPC
 * error leaves with Writ's error as `data` (messages.ts). A request's `_meta` `traceparent` and
 * `tracestate` are the parent of Writ's spans for it (observability/tracing.ts).
 */
import {
  type CallToolRequest,
  SUPPORTED_PROTOCOL_VERSIONS as LEGACY_REVISIONS,
} from "@modelcontextprotocol/sdk/types.js";
import {
  createMcpHandler,
  isJSONRPCRequest,
  isLegacyRequest,
  PROTOCOL_VERSION_META_KEY,
  type Server,
} from "@modelcontextprotocol/server";
import { isRecord } from "../core/json.ts";
import { withMessageTrace } from "../observability/tracing.ts";
import { newModernServer } from "./initialize.ts";
import { ListenStreams } from "./listen.ts";
import { withErrorData } from "./messages.ts";
import { METHODS, type PostContext } from "./methods/index.ts";
import { answerModernCall, plainModernCall } from "./modern-fast-path.ts";
import { refuseParamHeaders } from "./param-headers.ts";
import { registerTasks } from "./tasks-methods.ts";

/** Whether the v2 SDK serves this POST (whose body was read already) as 2026-07-28. */
export async function isModernRequest(request: Request, messages: unknown): Promise<boolean> {
  if (namesNoModernRevision(request, messages)) return false;
  return !(await isLegacyRequest(request, messages));
}

/**
 * A JSON-RPC request (not a response, not a batch) whose `_meta` makes no protocol-version claim,
 * sent with no MCP-Protocol-Version header or a 2025-era one: what every 2025-11-25 call is. The
 * SDK's classification (`classifyInboundRequest`) routes such a request to the legacy era; this
 * says so without it, whose first steps are two response-schema parses that fail, with their
 * errors, on every request. Anything else is left to the SDK.
 */
export function namesNoModernRevision(request: Request, messages: unknown): boolean {
  if (request.method !== "POST" || !isRecord(messages) || "result" in messages || "error" in messages)
    return false;
  const version = request.headers.get("mcp-protocol-version");
  if (version !== null && !LEGACY_REVISIONS.includes(version)) return false;
  const meta = isRecord(messages.params) ? messages.params._meta : undefined;
  if (isRecord(meta) && PROTOCOL_VERSION_META_KEY in meta) return false;
  return isJSONRPCRequest(messages);
}

/** The W3C trace context a request carries in its `_meta` (`traceparent`, `tracestate`). */
function traceCarrier(messages: unknown): Record<string, string> {
  const params = isRecord(messages) ? messages.params : undefined;
  const meta = isRecord(params) ? params._meta : undefined;
  if (!isRecord(meta)) return {};
  const carrier: Record<string, string> = {};
  for (const key of ["traceparent", "tracestate"]) {
    const value = meta[key];
    if (typeof value === "string") carrier[key] = value;
  }
  return carrier;
}

/** The serving of 2026-07-28 requests for one `/mcp` endpoint. */
export class ModernEndpoint {
  /** Each request's context, for the server the SDK asks the factory for while it serves it. */
  readonly #posts = new WeakMap<Request, PostContext>();
  /** The `subscriptions/listen` streams (listen.ts), from the first one on. */
  #listen: ListenStreams | undefined;
  readonly #handler = createMcpHandler(({ requestInfo }) => this.#serverFor(requestInfo), {
    legacy: "reject",
  });

  /**
   * Answers `request`, a 2026-07-28 POST whose body endpoint.ts read and checked (`messages`, and
   * `call`, its `tools/call` as body.ts read it): a plain call by modern-fast-path.ts, anything
   * else by the SDK's entry.
   */
  async answer(
    post: PostContext,
    request: Request,
    messages: unknown,
    call: CallToolRequest | undefined,
  ): Promise<Response> {
    // Mcp-Param-* headers agree with the tools/call's arguments, or nothing is decided.
    const refused = await refuseParamHeaders(post, request, messages);
    if (refused !== undefined) return refused;
    const method = isRecord(messages) && typeof messages.method === "string" ? messages.method : "message";
    if (method === "subscriptions/listen") {
      this.#listen ??= new ListenStreams(post.gw, post.discovery);
      return this.#listen.open(post.subject, request, messages);
    }
    const plain = plainModernCall(request, messages, call);
    const response = await withMessageTrace(`mcp ${method}`, traceCarrier(messages), () => {
      if (plain !== undefined) return answerModernCall(post, request, plain);
      this.#posts.set(request, post);
      return this.#handler.fetch(request, { parsedBody: messages });
    });
    return withErrorData(response);
  }

  /** The request's server, its methods registered; fails closed for a request it was not given. */
  #serverFor(request: Request | undefined): Server {
    const post = request === undefined ? undefined : this.#posts.get(request);
    if (post === undefined) throw new Error("mcp: a 2026-07-28 request reached the SDK without its context");
    const server = newModernServer();
    for (const method of METHODS) method.modern({ ...post, server });
    registerTasks({ ...post, server });
    return server;
  }
}
