/**
 * What a method handler of `/mcp` gets: the POST's caller and gateway (`PostContext`, the same for
 * Writ's own answers in fast-path.ts and the per-POST SDK server), and on the SDK server the
 * server itself (`ServerPost`), where a handler registers for its method.
 *
 * Adding a method: a module in this folder exporting a `MethodRegistration`, listed in index.ts:
 * `legacy` registers the handler on a 2025-11-25 POST's server (the v1 SDK's,
 * `post.server.setRequestHandler(<the SDK's request schema>, …)`), `modern` on a 2026-07-28
 * request's (the v2 SDK's, `post.server.setRequestHandler("<method>", …)`), both calling the
 * module's one handler function, so that the revisions cannot drift; its request schema goes into
 * body.ts's `REQUEST_SCHEMAS` (checked before anything runs) and its name into messages.ts's
 * `OFFERED_METHODS`. A request to the client (sampling, elicitation,
 * roots) is `extra.sendRequest` inside a handler: the answer must then be a stream
 * (lazy-stream.ts opens one on the first message sent), so such a method belongs to the SDK server,
 * not to fast-path.ts.
 */

import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Server as ModernServer } from "@modelcontextprotocol/server";
import type { CodeMode } from "../../codemode/index.ts";
import type { CallObserver, ClientRequestMethod } from "../../core/handlers.ts";
import type { ProposedCall, Subject } from "../../core/types.ts";
import type { Gateway, ToolDiscovery } from "../../pipeline/index.ts";
import type { McpSessionRecord } from "../../store/types.ts";
import type { CancellableCalls } from "../cancellation.ts";
import type { LazyStream } from "../lazy-stream.ts";

/** The 2025-11-25 session a POST names (`Mcp-Session-Id`, sessions.ts), checked to be the caller's. */
export interface SessionContext {
  /** The session as stored: its client's declared capabilities and protocol revision. */
  readonly record: McpSessionRecord;
  /** The POST's answer as a resumable SSE stream of the session (session-streams.ts). */
  stream(transport: WebStandardStreamableHTTPServerTransport): LazyStream;
  /** Subscribes the session to `uri` (`on`), or unsubscribes it. */
  subscribe(uri: string, on: boolean): Promise<void>;
}

export interface PostContext {
  gw: Gateway;
  discovery: ToolDiscovery;
  /** Code Mode's `run_code` (absent: not offered). */
  codeMode?: CodeMode | undefined;
  /** Calls running on this instance, cancellable from another POST (or instance). */
  cancellable: CancellableCalls;
  subject: Subject;
  authorization: string | undefined;
  requestId: string;
  /** The URL the POST arrived at (an approval's console page is at its origin, or `mcp.resource`'s). */
  requestUrl: string;
  /**
   * The calls of the POST's one `tools/call`, as body.ts read them with the MCP intake adapter
   * while checking it: handed to intake as they are, not serialized and read again.
   */
  proposed?: ProposedCall[] | undefined;
  /** Whether 2025-11-25 sessions are on (`mcp.sessions.enabled`): `initialize` opens one. */
  sessionsEnabled?: boolean | undefined;
  /** The session the POST names (2025-11-25, sessions on). */
  session?: SessionContext | undefined;
  /** How a 2025-11-25 call asks its caller an upstream's request (../server-requests.ts; absent: it cannot). */
  askCaller?: Asker | undefined;
  /**
   * Set by a handler whose call the policy refused for want of scopes (../step-up.ts): the POST
   * is then answered 403 with the `insufficient_scope` challenge naming them.
   */
  challenge: ScopeChallenge;
}

/** A POST's step-up challenge: every scope the refused operation needs, and why. */
export interface ScopeChallenge {
  scopes?: readonly string[];
  description?: string;
}

/** A server-to-client request sent to the caller on a call's answer. */
export interface ForwardedRequest {
  jsonrpc: "2.0";
  id: string;
  method: ClientRequestMethod;
  params: Record<string, unknown>;
}

/** Sends a request on the call's answer (making it a stream); absent when the answer cannot be one. */
export type RequestWriter = ((message: ForwardedRequest) => void) | undefined;

/** A call's `CallObserver.request`: the POST's, how to write on its answer, the call's own signal. */
export type Asker = (
  post: PostContext,
  write: RequestWriter,
  call: AbortSignal,
) => NonNullable<CallObserver["request"]>;

/** A call on its way through the pipeline: the POST's context and who watches the call. */
export interface CallContext extends PostContext {
  /** Progress and log messages for a caller reading the answer as a stream; its cancellation. */
  observer: CallObserver;
}

/** A POST answered by the SDK's server. */
export interface ServerPost extends PostContext {
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  /** The POST's body as parsed (one message or a batch). */
  messages: unknown;
  /** Whether the caller accepts a stream, so that the answer may become one. */
  stream: boolean;
  /** Runs `handle` as a running call: the server stays open until it answered. */
  tracked<T>(handle: () => Promise<T>): Promise<T>;
}

/** A 2026-07-28 request answered by the v2 SDK's server (one server per request). */
export interface ModernPost extends PostContext {
  server: ModernServer;
}

/** Registers a method's handler on a POST's SDK server, for each revision. */
export interface MethodRegistration {
  /** On a 2025-11-25 POST's server (the v1 SDK's). */
  legacy(post: ServerPost): void;
  /** On a 2026-07-28 request's server (the v2 SDK's). */
  modern(post: ModernPost): void;
}
