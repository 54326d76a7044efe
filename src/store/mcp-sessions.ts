/**
 * The statements and rows of 2025-11-25 MCP sessions (src/mcp/sessions.ts; SQLite migration 15,
 * PostgreSQL migration 16): `McpSessionStore` and its SQL (`SqlMcpSessions`), shared by both
 * dialects. A session row (`mcp_sessions`), the resources it subscribed
 * (`mcp_session_subscriptions`) and the SSE events of its streams (`mcp_session_events`, kept for
 * resumption with `Last-Event-ID`, at most `maxEvents` a session) all expire with the token that
 * opened it; expired rows are pruned whenever a session is opened.
 */
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import { jsonText, parseStored, storedJsonText } from "./rows.ts";
import { type Sql, sql } from "./sql.ts";
import type { SqlAccess } from "./sql-access.ts";

/** A session as stored: who opened it and what its client declared. */
export interface McpSessionRecord {
  /** SHA-256 (hex) of the session id. */
  id_hash: string;
  tenant: string;
  subject: string;
  /** The protocol revision the session's `initialize` negotiated. */
  protocol_version: string;
  /** The client's declared capabilities (`initialize`'s `params.capabilities`). */
  capabilities: Record<string, unknown>;
  created_at: Date;
  /** The expiry of the token that opened it. */
  expires_at: Date;
}

/** An SSE event kept for resumption: its id (`seq`), its stream, its message ('' when priming). */
export interface McpSessionEvent {
  seq: number;
  stream: string;
  message: string;
}

export interface McpSessionStore {
  /** Stores a new session (and prunes the expired sessions, subscriptions and events). */
  createMcpSession(session: McpSessionRecord): Promise<void>;
  /** The session whose id hashes to `idHash`, while it has not expired. */
  readMcpSession(idHash: string): Promise<McpSessionRecord | undefined>;
  /** Ends a session with its subscriptions and events; whether it existed. */
  deleteMcpSession(idHash: string): Promise<boolean>;
  /** Adds (`on`) or removes a resource subscription of the session. */
  setMcpSubscription(session: McpSessionRecord, uri: string, on: boolean): Promise<void>;
  /** The URIs the session subscribed. */
  mcpSubscriptions(idHash: string): Promise<string[]>;
  /** Keeps an SSE event of one of the session's streams; its id (and trims to `maxEvents`). */
  appendMcpEvent(
    session: McpSessionRecord,
    stream: string,
    message: string,
    maxEvents: number,
  ): Promise<number>;
  /** The stream the event `seq` of the session was sent on (undefined: no such event kept). */
  mcpEventStream(idHash: string, seq: number): Promise<string | undefined>;
  /** The events of the session's `stream` after `seq`, oldest first. */
  mcpEventsAfter(idHash: string, stream: string, seq: number): Promise<McpSessionEvent[]>;
}

const idHashSchema = z.string().regex(/^[0-9a-f]{64}$/);

const jsonObjectText = storedJsonText.pipe(z.record(z.string(), z.unknown()));

const sessionRowSchema = z.object({
  id_hash: z.string(),
  tenant: z.string(),
  subject: z.string(),
  protocol_version: z.string(),
  capabilities: jsonObjectText,
  created_at: z.coerce.number().int(),
  expires_at: z.coerce.number().int(),
});

const eventRowSchema = z.object({
  seq: z.coerce.number().int(),
  stream: z.string(),
  message: z.string(),
});

function sessionOf(row: unknown): McpSessionRecord {
  const r = parseStored(sessionRowSchema, row, "an MCP session");
  return { ...r, created_at: new Date(r.created_at), expires_at: new Date(r.expires_at) };
}

function insertSessionQuery(session: McpSessionRecord): Sql {
  if (!idHashSchema.safeParse(session.id_hash).success || session.subject === "" || session.tenant === "") {
    throw new WritError("invalid_argument", "the MCP session is invalid", {
      suggestedFix:
        "open sessions with McpSessions.open (src/mcp/sessions.ts): a SHA-256 id hash, a subject and tenant",
    });
  }
  const s = session;
  return sql`INSERT INTO mcp_sessions (id_hash, tenant, subject, protocol_version, capabilities, created_at, expires_at)
    VALUES (${s.id_hash}, ${s.tenant}, ${s.subject}, ${s.protocol_version}, ${jsonText(s.capabilities, "/capabilities")},
      ${s.created_at.getTime()}, ${s.expires_at.getTime()})`;
}

export class SqlMcpSessions implements McpSessionStore {
  constructor(private readonly db: SqlAccess) {}

  async createMcpSession(session: McpSessionRecord): Promise<void> {
    const now = this.db.clock().getTime();
    const what = "prune expired MCP sessions";
    await this.db.execute(what, sql`DELETE FROM mcp_sessions WHERE expires_at <= ${now}`);
    await this.db.execute(what, sql`DELETE FROM mcp_session_subscriptions WHERE expires_at <= ${now}`);
    await this.db.execute(what, sql`DELETE FROM mcp_session_events WHERE expires_at <= ${now}`);
    await this.db.execute("store an MCP session", insertSessionQuery(session));
  }

  async readMcpSession(idHash: string): Promise<McpSessionRecord | undefined> {
    const [row] = await this.db.rows(
      "read an MCP session",
      sql`SELECT id_hash, tenant, subject, protocol_version, capabilities, created_at, expires_at
        FROM mcp_sessions WHERE id_hash = ${idHash} AND expires_at > ${this.db.clock().getTime()}`,
    );
    return row === undefined ? undefined : sessionOf(row);
  }

  async deleteMcpSession(idHash: string): Promise<boolean> {
    const what = "end an MCP session";
    const deleted = await this.db.execute(what, sql`DELETE FROM mcp_sessions WHERE id_hash = ${idHash}`);
    await this.db.execute(what, sql`DELETE FROM mcp_session_subscriptions WHERE id_hash = ${idHash}`);
    await this.db.execute(what, sql`DELETE FROM mcp_session_events WHERE id_hash = ${idHash}`);
    return deleted > 0;
  }

  async setMcpSubscription(session: McpSessionRecord, uri: string, on: boolean): Promise<void> {
    const h = session.id_hash;
    await this.db.execute(
      on ? "subscribe an MCP session to a resource" : "unsubscribe an MCP session from a resource",
      on
        ? sql`INSERT INTO mcp_session_subscriptions (id_hash, uri, expires_at)
            VALUES (${h}, ${uri}, ${session.expires_at.getTime()}) ON CONFLICT (id_hash, uri) DO NOTHING`
        : sql`DELETE FROM mcp_session_subscriptions WHERE id_hash = ${h} AND uri = ${uri}`,
    );
  }

  async mcpSubscriptions(idHash: string): Promise<string[]> {
    const rows = await this.db.rows(
      "read an MCP session's subscriptions",
      sql`SELECT uri FROM mcp_session_subscriptions WHERE id_hash = ${idHash} ORDER BY uri`,
    );
    return rows.map((row) => parseStored(z.object({ uri: z.string() }), row, "an MCP subscription").uri);
  }

  async appendMcpEvent(
    session: McpSessionRecord,
    stream: string,
    message: string,
    maxEvents: number,
  ): Promise<number> {
    const h = session.id_hash;
    const [row] = await this.db.rows(
      "keep an MCP session's event",
      sql`INSERT INTO mcp_session_events (id_hash, stream, message, expires_at)
        VALUES (${h}, ${stream}, ${message}, ${session.expires_at.getTime()}) RETURNING seq`,
    );
    const seq = parseStored(z.object({ seq: z.coerce.number().int() }), row, "an MCP event").seq;
    // Bounded: the session's events older than its newest maxEvents go (none while fewer are kept).
    await this.db.execute(
      "trim an MCP session's events",
      sql`DELETE FROM mcp_session_events WHERE id_hash = ${h} AND seq < (
        SELECT seq FROM mcp_session_events WHERE id_hash = ${h} ORDER BY seq DESC LIMIT 1 OFFSET ${maxEvents - 1})`,
    );
    return seq;
  }

  async mcpEventStream(idHash: string, seq: number): Promise<string | undefined> {
    const [row] = await this.db.rows(
      "read an MCP session's event",
      sql`SELECT seq, stream, message FROM mcp_session_events WHERE id_hash = ${idHash} AND seq = ${seq}`,
    );
    return row === undefined ? undefined : parseStored(eventRowSchema, row, "an MCP event").stream;
  }

  async mcpEventsAfter(idHash: string, stream: string, seq: number): Promise<McpSessionEvent[]> {
    const rows = await this.db.rows(
      "read an MCP session's events",
      sql`SELECT seq, stream, message FROM mcp_session_events
        WHERE id_hash = ${idHash} AND stream = ${stream} AND seq > ${seq} ORDER BY seq`,
    );
    return rows.map((row) => parseStored(eventRowSchema, row, "an MCP event"));
  }
}
