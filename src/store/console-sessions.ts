/**
 * The statements and row shape of console sessions (`console_sessions`, SQLite migration 8,
 * PostgreSQL migration 9): `ConsoleSessionStore` and its SQL (`SqlConsoleSessions`), shared by
 * both dialects.
 */
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import { jsonText, parseStored, storedJsonText } from "./rows.ts";
import { raw, type Sql, sql } from "./sql.ts";
import type { SqlAccess } from "./sql-access.ts";

/**
 * A console session (src/console/session.ts). The cookie holds an opaque random id; the store
 * keeps only its SHA-256, and who signed in (from the verified token; its claims are not kept).
 */
export interface ConsoleSession {
  /** SHA-256 (hex) of the session id. */
  id_hash: string;
  subject: string;
  tenant: string;
  issuer: string;
  roles: string[];
  scopes: string[];
  created_at: Date;
  last_seen_at: Date;
  /** min(the token's expiry, the configured maximum lifetime). */
  expires_at: Date;
  /** Set by sign-out. */
  revoked_at: Date | null;
}

export type NewConsoleSession = Omit<ConsoleSession, "last_seen_at" | "revoked_at">;

/** A console request's session: active (and now seen), or why it is not. */
export type ConsoleSessionUse =
  | { state: "active"; session: ConsoleSession }
  | { state: "revoked" | "expired" | "idle" | "unknown" };

export interface ConsoleSessionStore {
  /** Stores a new console session (and prunes the expired ones). */
  createConsoleSession(session: NewConsoleSession): Promise<void>;
  /**
   * Loads the session whose id hashes to `idHash` for a console request: when it is not revoked,
   * not past `expires_at` and (with `idleTimeoutMs`) seen within that time, it is marked seen
   * `now`, atomically; otherwise the reason it is not active.
   */
  useConsoleSession(idHash: string, idleTimeoutMs: number | null, now?: Date): Promise<ConsoleSessionUse>;
  /** Revokes an active session (sign-out): the revoked session; undefined when it was not active. */
  revokeConsoleSession(idHash: string, now?: Date): Promise<ConsoleSession | undefined>;
  /** Deletes sessions past `expires_at` (revoked or not); returns how many. */
  pruneConsoleSessions(now?: Date): Promise<number>;
}

const SESSION_COLUMNS = raw(
  "id_hash, subject, tenant, issuer, roles, scopes, created_at, last_seen_at, expires_at, revoked_at",
);

const idHashSchema = z.string().regex(/^[0-9a-f]{64}$/);

const newSessionSchema = z.object({
  id_hash: idHashSchema,
  subject: z.string().min(1),
  tenant: z.string().min(1),
  issuer: z.string(),
  roles: z.array(z.string()),
  scopes: z.array(z.string()),
  created_at: z.date(),
  expires_at: z.date(),
});

const stringsText = storedJsonText.pipe(z.array(z.string()));

const sessionRowSchema = z.object({
  id_hash: z.string(),
  subject: z.string(),
  tenant: z.string(),
  issuer: z.string(),
  roles: stringsText,
  scopes: stringsText,
  created_at: z.number().int(),
  last_seen_at: z.number().int(),
  expires_at: z.number().int(),
  revoked_at: z.number().int().nullable(),
});

const stateRowSchema = z.object({ expires_at: z.number().int(), revoked_at: z.number().int().nullable() });

function sessionOf(row: unknown): ConsoleSession {
  const r = parseStored(sessionRowSchema, row, "a console session");
  return {
    ...r,
    created_at: new Date(r.created_at),
    last_seen_at: new Date(r.last_seen_at),
    expires_at: new Date(r.expires_at),
    revoked_at: r.revoked_at === null ? null : new Date(r.revoked_at),
  };
}

/** The INSERT of a new session, after checking it. */
function insertSessionQuery(session: NewConsoleSession): Sql {
  const parsed = newSessionSchema.safeParse(session);
  if (!parsed.success || session.expires_at.getTime() <= session.created_at.getTime()) {
    throw new WritError("invalid_argument", "the console session is invalid", {
      suggestedFix:
        "start sessions with startSession (src/console/session.ts): a SHA-256 id hash, a subject and tenant, and an expiry after its start",
    });
  }
  const s = parsed.data;
  const created = s.created_at.getTime();
  return sql`INSERT INTO console_sessions (${SESSION_COLUMNS})
    VALUES (${s.id_hash}, ${s.subject}, ${s.tenant}, ${s.issuer}, ${jsonText(s.roles, "/roles")}, ${jsonText(s.scopes, "/scopes")},
      ${created}, ${created}, ${s.expires_at.getTime()}, NULL)`;
}

/** Marks an active session seen at `now`; returns its row, or none when it is not active. */
function useSessionQuery(idHash: string, idleTimeoutMs: number | null, now: number): Sql {
  const idle = idleTimeoutMs === null ? raw("") : sql` AND last_seen_at > ${now - idleTimeoutMs}`;
  return sql`UPDATE console_sessions SET last_seen_at = ${now}
    WHERE id_hash = ${idHash} AND revoked_at IS NULL AND expires_at > ${now}${idle}
    RETURNING ${SESSION_COLUMNS}`;
}

function sessionStateQuery(idHash: string): Sql {
  return sql`SELECT expires_at, revoked_at FROM console_sessions WHERE id_hash = ${idHash}`;
}

/** Why a session that `useSessionQuery` did not find active is not (its row, or none). */
function inactiveSession(row: unknown, now: number): Exclude<ConsoleSessionUse, { state: "active" }> {
  if (row === undefined) return { state: "unknown" };
  const r = parseStored(stateRowSchema, row, "a console session");
  if (r.revoked_at !== null) return { state: "revoked" };
  return { state: r.expires_at <= now ? "expired" : "idle" };
}

function revokeSessionQuery(idHash: string, now: number): Sql {
  return sql`UPDATE console_sessions SET revoked_at = ${now}
    WHERE id_hash = ${idHash} AND revoked_at IS NULL AND expires_at > ${now}
    RETURNING ${SESSION_COLUMNS}`;
}

function pruneSessionsQuery(now: number): Sql {
  return sql`DELETE FROM console_sessions WHERE expires_at <= ${now}`;
}

export class SqlConsoleSessions implements ConsoleSessionStore {
  constructor(private readonly db: SqlAccess) {}

  async createConsoleSession(session: NewConsoleSession): Promise<void> {
    await this.pruneConsoleSessions();
    await this.db.execute("store a console session", insertSessionQuery(session));
  }

  async useConsoleSession(
    idHash: string,
    idleTimeoutMs: number | null,
    now: Date = this.db.clock(),
  ): Promise<ConsoleSessionUse> {
    const t = now.getTime();
    const [row] = await this.db.rows("read a console session", useSessionQuery(idHash, idleTimeoutMs, t));
    if (row !== undefined) return { state: "active", session: sessionOf(row) };
    const [stored] = await this.db.rows("read a console session", sessionStateQuery(idHash));
    return inactiveSession(stored, t);
  }

  async revokeConsoleSession(
    idHash: string,
    now: Date = this.db.clock(),
  ): Promise<ConsoleSession | undefined> {
    const [row] = await this.db.rows("revoke a console session", revokeSessionQuery(idHash, now.getTime()));
    return row === undefined ? undefined : sessionOf(row);
  }

  async pruneConsoleSessions(now: Date = this.db.clock()): Promise<number> {
    return this.db.execute("prune expired console sessions", pruneSessionsQuery(now.getTime()));
  }
}
