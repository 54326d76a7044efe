/**
 * Writ's MCP endpoint (`/mcp`, Streamable HTTP, stateless: every POST carries the caller's
 * bearer JWT and is authenticated exactly as the HTTP API's requests are). It serves two protocol
 * revisions, per request. A POST is authenticated (authenticate.ts), its body read strictly
 * (body.ts); then a request the v2 SDK classifies as 2026-07-28 (its `_meta` envelope claim) is
 * answered by Writ itself when it is a plain `tools/call` (modern-fast-path.ts), else by the v2
 * SDK's server (modern.ts), and everything else as 2025-11-25: by Writ itself
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
 *   results have no `isError`) with Writ's error in `error.data.error`. `resources/subscribe` and
 *   `unsubscribe` only with sessions on (else Method not found: no session to notify).
 * - `subscriptions/listen` (2026-07-28): a stream of the list changes that alter what this caller
 *   sees, until its token expires (listen.ts).
 * - `tasks/get`, `tasks/update`, `tasks/cancel` (2026-07-28, the tasks extension): a `tools/call`
 *   from a client declaring the extension that is not refused at once becomes a task, kept in
 *   the store; each request on it is decided by the policy on the task and logged (tasks.ts).
 *
 * With `mcp.sessions.enabled`, 2025-11-25 clients get sessions (sessions.ts): `initialize` answers
 * an `Mcp-Session-Id`, a POST naming it is checked to be the caller's, GET opens (or resumes) its
 * stream, DELETE ends it; a session's `tools/call` streams resumably (session-streams.ts).
 * - `completion/complete`: asked of the server owning the prompt or template, when the caller is
 *   shown it (methods/completion.ts).
 * - A POST of JSON-RPC responses: the caller's answers to an upstream's requests Writ forwarded on
 *   its calls' streams (server-requests.ts).
 */
import type { Context } from "hono";
import type { CodeMode } from "../codemode/index.ts";
import type { Gateway, ToolDiscovery } from "../pipeline/index.ts";
import { authenticate, type McpEnv, notPost } from "./authenticate.ts";
import { readMcpBody } from "./body.ts";
import { CancellableCalls } from "./cancellation.ts";
import type { McpSessionsConfig } from "./config.ts";
import { answerCall, answerList, plainRequest } from "./fast-path.ts";
import { ListenStreams } from "./listen.ts";
import { callTool, carries, listTools, type PostContext } from "./methods/index.ts";
import { isModernRequest, ModernEndpoint } from "./modern.ts";
import { answerWithServer } from "./sdk-server.ts";
import { ClientRequests } from "./server-requests.ts";
import { McpSessions, opensSession } from "./sessions.ts";
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
  sessionsConfig?: McpSessionsConfig,
): (c: Context<McpEnv>) => Promise<Response> {
  const cancellable = new CancellableCalls(gw.store);
  const modern = new ModernEndpoint();
  let listen: ListenStreams | undefined;
  const sessions =
    sessionsConfig?.enabled === true
      ? new McpSessions(gw.store, sessionsConfig, () => {
          listen ??= new ListenStreams(gw, discovery);
          return listen;
        })
      : undefined;
  const clientRequests = new ClientRequests();
  return async (c) => {
    if (c.req.method !== "POST" && sessions === undefined) return notPost(c.req.method);
    const subject = await authenticate(gw, c);
    if (subject instanceof Response) return subject;
    if (c.req.method !== "POST" && sessions !== undefined) return sessions.answer(c.req.raw, subject);
    const requestId = c.var.requestId;
    const body = await readMcpBody(gw, c.req.raw, requestId);
    if (!body.ok) return body.response;
    const session = sessions === undefined ? undefined : await sessions.named(c.req.raw, subject);
    if (session instanceof Response) return session;
    // The caller's answer to a request Writ forwarded on one of its calls (server-requests.ts).
    const answered = clientRequests.answer(subject, body.messages);
    if (answered !== undefined) return answered;
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
      sessionsEnabled: sessions !== undefined,
      session,
      askCaller: clientRequests.ask,
      challenge: {},
    };
    if (await isModernRequest(c.req.raw, body.messages)) {
      return challenged(post, await modern.answer(post, c.req.raw, body.messages, body.call));
    }
    const stream = answersAsStream(body.messages, c.req.header("accept"));
    if (sessions !== undefined && opensSession(body.messages)) {
      return sessions.initialize(subject, body.messages, () =>
        answerWithServer(post, c.req.raw, body.messages, stream),
      );
    }
    // A plain tools/call or tools/list is answered without an SDK server, as one would (fast-path.ts).
    const plain = plainRequest(c.req.raw, body);
    if (plain?.method === "tools/list") return answerList(plain.id, () => listTools(post));
    // A session's streamed call is the SDK server's, with a resumable stream (session-streams.ts).
    if (plain?.method === "tools/call" && !(stream && session !== undefined)) {
      const answer = await answerCall({
        id: plain.id,
        stream,
        run: (observer) => callTool({ ...post, observer }, plain.request, plain.id),
        ask: (write, signal) => clientRequests.ask(post, write, signal),
        cancellable: (cancel) => cancellable.add(subject, plain.id, cancel),
      });
      return challenged(post, answer);
    }
    return challenged(post, await answerWithServer(post, c.req.raw, body.messages, stream));
  };
}
