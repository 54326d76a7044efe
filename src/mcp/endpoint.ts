/**
 * Writ's MCP endpoint (`/mcp`, Streamable HTTP, stateless: every POST carries the caller's
 * bearer JWT and is authenticated exactly as the HTTP API's requests are). It serves two protocol
 * revisions, per request. A POST is authenticated (authenticate.ts), its body read strictly
 * (body.ts); then a request the v2 SDK classifies as 2026-07-28 (its `_meta` envelope claim) is
 * answered by the v2 SDK's server (modern.ts), and everything else as 2025-11-25: by Writ itself
 * when it is a plain `tools/call` or `tools/list` (fast-path.ts), else by a per-POST v1 SDK server
 * (sdk-server.ts). On either, each method's module (methods/) registers the same handler:
 *
 * - `tools/list`: the tools the discovery policy lets this caller see, in the registry's stable
 *   order, each as its contract's MCP view. Annotations come from the contract (side effect,
 *   idempotency), never from an upstream server's hints.
 * - `tools/call`: the whole pipeline with `execute`: normalization, policy, approval, conditions,
 *   grant, dispatch, result. Refusals the model can act on (invalid arguments, denials, pending
 *   approvals, backend failures) are tool execution errors (`isError: true`) carrying the
 *   structured error in `structuredContent`; an unknown tool is a protocol error. After an
 *   approval, the caller repeats the call with `_meta: {"writ/approval": "<id>"}` and it runs
 *   with the released grant; on 2026-07-28, to a client that takes URL elicitations, a call
 *   waiting for approval is `input_required` instead, and its retry with the `requestState`
 *   runs it (approval-flow.ts).
 * - `resources/list`, `resources/templates/list`, `prompts/list`: the upstream servers' resources,
 *   templates and prompts whose governing contract the discovery policy shows this caller, as the
 *   servers described them, plus `_meta["writ/contract"]`.
 * - `resources/read`, `prompts/get`: the whole pipeline, as `tools/call`; the contents and
 *   messages pass as the server sent them (redacted). A refusal is a JSON-RPC error (these
 *   results have no `isError`) with Writ's error in `error.data.error`. `resources/subscribe` is
 *   not offered (Method not found): the endpoint keeps no session to notify.
 * - `subscriptions/listen` (2026-07-28): a stream of the list changes that alter what this caller
 *   sees, until its token expires (listen.ts).
 */
import type { Context } from "hono";
import type { CodeMode } from "../codemode/index.ts";
import type { Gateway, ToolDiscovery } from "../pipeline/index.ts";
import { authenticate, type McpEnv, notPost } from "./authenticate.ts";
import { readMcpBody } from "./body.ts";
import { CancellableCalls } from "./cancellation.ts";
import { answerCall, answerList, plainRequest } from "./fast-path.ts";
import { callTool, carries, listTools, type PostContext } from "./methods/index.ts";
import { isModernRequest, ModernEndpoint } from "./modern.ts";
import { answerWithServer } from "./sdk-server.ts";
import { challenged } from "./step-up.ts";

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

/** The hono handler for `/mcp`. */
export function mcpEndpoint(
  gw: Gateway,
  discovery: ToolDiscovery,
  codeMode?: CodeMode,
): (c: Context<McpEnv>) => Promise<Response> {
  const cancellable = new CancellableCalls(gw.store);
  const modern = new ModernEndpoint();
  return async (c) => {
    if (c.req.method !== "POST") return notPost(c.req.method);
    const subject = await authenticate(gw, c);
    if (subject instanceof Response) return subject;
    const requestId = c.var.requestId;
    const body = await readMcpBody(gw, c.req.raw, requestId);
    if (!body.ok) return body.response;
    const authorization = c.req.header("authorization");
    const post: PostContext = {
      gw,
      discovery,
      codeMode,
      cancellable,
      subject,
      authorization,
      requestId,
      requestUrl: c.req.url,
      proposed: body.proposed,
      challenge: {},
    };
    if (await isModernRequest(c.req.raw, body.messages)) {
      return challenged(post, await modern.answer(post, c.req.raw, body.messages));
    }
    const stream = answersAsStream(body.messages, c.req.header("accept"));
    // A plain tools/call or tools/list is answered without an SDK server, as one would (fast-path.ts).
    const plain = plainRequest(c.req.raw, body);
    if (plain?.method === "tools/list") return answerList(plain.id, () => listTools(post));
    if (plain?.method === "tools/call") {
      const answer = await answerCall({
        id: plain.id,
        stream,
        run: (observer) => callTool({ ...post, observer }, plain.request, plain.id),
        cancellable: (cancel) => cancellable.add(subject, plain.id, cancel),
      });
      return challenged(post, answer);
    }
    return challenged(post, await answerWithServer(post, c.req.raw, body.messages, stream));
  };
}
