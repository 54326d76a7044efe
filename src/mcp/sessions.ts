/**
 * Sessions of 2025-11-25 clients on `/mcp` (`mcp.sessions.enabled`; off, the endpoint is
 * stateless and none of this runs). With them on:
 *
 * - `initialize` answers an `Mcp-Session-Id`: 32 random bytes (base64url). The store keeps its
 *   SHA-256 with the caller's tenant and subject, the protocol revision the handshake negotiated
 *   and the capabilities the client declared; it expires with the token that opened it.
 * - A later request naming the id is served by any instance (the row is read from the store):
 *   an unknown or expired id is 404 (the client initializes again), a session opened by another
 *   subject or tenant 403 — it is never usable with another caller's token. Every such request
 *   passed the endpoint's checks first (Host/Origin, the bearer token, the strict body, the
 *   audit interceptor). A request without the header is served statelessly, as with sessions off.
 * - GET opens the session's notification stream, or resumes a stream with `Last-Event-ID`;
 *   DELETE ends the session (session-streams.ts).
 * - `resources/subscribe` and `unsubscribe` (methods/subscribe.ts) are kept with the session; its
 *   GET stream relays `notifications/resources/updated` for them.
 *
 * `sessionCapabilities` is the read API of what the session's client declared (for requests to
 * the client: sampling, elicitation, roots).
 */
import { createHash, randomBytes } from "node:crypto";
import {
  ErrorCode,
  isInitializeRequest,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { WritError } from "../core/errors.ts";
import type { Subject } from "../core/types.ts";
import type { McpSessionRecord, McpSessionStore } from "../store/types.ts";
import { jsonRpcError, notPost } from "./authenticate.ts";
import type { McpSessionsConfig } from "./config.ts";
import type { ListenStreams } from "./listen.ts";
import type { PostContext, SessionContext } from "./methods/index.ts";
import { SessionStreams } from "./session-streams.ts";

/** The header that names a session (Streamable HTTP, 2025-11-25). */
const SESSION_HEADER = "mcp-session-id";

function hashOf(id: string): string {
  return createHash("sha256").update(id).digest("hex");
}

/** What the client of the POST's session declared at `initialize`; undefined without a session. */
export function sessionCapabilities(post: Pick<PostContext, "session">): Record<string, unknown> | undefined {
  return post.session?.record.capabilities;
}

/** Whether `messages` is one `initialize` request (a batch never opens a session). */
export function opensSession(messages: unknown): boolean {
  return !Array.isArray(messages) && isInitializeRequest(messages);
}

const sessionNotFound = () =>
  jsonRpcError(
    404,
    -32001,
    new WritError("not_found", "Session not found: it ended or expired (with the token that opened it)", {
      suggestedFix: "initialize again without Mcp-Session-Id: a new session starts",
    }),
  );

const sessionOfAnother = () =>
  jsonRpcError(
    403,
    ErrorCode.ConnectionClosed,
    new WritError("forbidden", "the session named by Mcp-Session-Id was opened by another caller", {
      suggestedFix: "use a session your own token opened, or initialize a new one",
    }),
  );

function badSessionRequest(status: number, message: string, suggestedFix: string): Response {
  return jsonRpcError(
    status,
    ErrorCode.ConnectionClosed,
    new WritError("invalid_argument", message, { suggestedFix }),
  );
}

/** The sessions of one `/mcp` endpoint. */
export class McpSessions {
  readonly #streams: SessionStreams;

  constructor(
    private readonly store: McpSessionStore,
    config: McpSessionsConfig,
    listen: () => ListenStreams,
  ) {
    this.#streams = new SessionStreams(store, config, listen);
  }

  /** The session `request` names, checked to be `subject`'s: none named, its context, or the 404/403. */
  async named(request: Request, subject: Subject): Promise<SessionContext | Response | undefined> {
    const id = request.headers.get(SESSION_HEADER);
    if (id === null) return undefined;
    const record = await this.store.readMcpSession(hashOf(id));
    if (record === undefined) return sessionNotFound();
    if (record.subject !== subject.id || record.tenant !== subject.tenant) return sessionOfAnother();
    return this.#context(record);
  }

  #context(record: McpSessionRecord): SessionContext {
    return {
      record,
      stream: (transport) => this.#streams.post(record, transport),
      subscribe: async (uri, on) => {
        await this.store.setMcpSubscription(record, uri, on);
        this.#streams.subscriptionsChanged(record);
      },
    };
  }

  /**
   * Answers an `initialize` (`answer`) and, when it succeeded, opens a session for `subject`
   * with what the client declared: the answer carries its id.
   */
  async initialize(subject: Subject, messages: unknown, answer: () => Promise<Response>): Promise<Response> {
    const response = await answer();
    if (response.status !== 200 || !isInitializeRequest(messages)) return response;
    const { protocolVersion, capabilities } = messages.params;
    const id = randomBytes(32).toString("base64url");
    const now = Date.now();
    const exp = subject.claims.exp;
    await this.store.createMcpSession({
      id_hash: hashOf(id),
      tenant: subject.tenant,
      subject: subject.id,
      protocol_version: SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)
        ? protocolVersion
        : LATEST_PROTOCOL_VERSION,
      capabilities,
      created_at: new Date(now),
      // A verified token always has `exp`; without one the session is over at once.
      expires_at: new Date(typeof exp === "number" ? exp * 1000 : now),
    });
    const headers = new Headers(response.headers);
    headers.set(SESSION_HEADER, id);
    return new Response(response.body, { status: response.status, headers });
  }

  /** A GET (the session's stream, or one resumed) or DELETE (ends the session) of `subject`. */
  async answer(request: Request, subject: Subject): Promise<Response> {
    if (request.method !== "GET" && request.method !== "DELETE") return notPost(request.method);
    const session = await this.named(request, subject);
    if (session === undefined) {
      return badSessionRequest(
        400,
        `${request.method} needs a session: Mcp-Session-Id is missing`,
        "send the Mcp-Session-Id your initialize answer carried",
      );
    }
    if (session instanceof Response) return session;
    if (request.method === "DELETE") {
      await this.store.deleteMcpSession(session.record.id_hash);
      return new Response(null, { status: 200 });
    }
    if (request.headers.get("accept")?.includes("text/event-stream") !== true) {
      return badSessionRequest(
        406,
        "Not Acceptable: GET must accept text/event-stream",
        "send Accept: text/event-stream",
      );
    }
    const stream = await this.#streams.get(session.record, subject, request.headers.get("last-event-id"));
    return (
      stream ??
      badSessionRequest(
        400,
        "Last-Event-ID names no event kept for this session (too old, or not an event of it)",
        "open the session's stream again without Last-Event-ID",
      )
    );
  }
}
