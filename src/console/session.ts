/**
 * Console sessions, kept on the server (issue 15). A reviewer or approver signs in by pasting their
 * bearer JWT; Writ verifies it with the same IdentityVerifier as the API, stores a session in the
 * store (`console_sessions`: who, until when) and sets an HttpOnly, SameSite=Strict cookie scoped
 * to /console (Secure over https) that holds only an opaque random id — the JWT is never in a
 * cookie, and the store keeps only the id's SHA-256. Every console request loads the session;
 * one that is revoked, expired or (with `console.idle_timeout_s`) idle is signed out. A session
 * lasts until the token expires or `console.session_max_age_s` passes, whichever comes first.
 * Sign-out revokes it in the store, so a copied cookie stops working on every instance. Sign-in
 * (granted or refused) and sign-out are decision-log entries (path `writ/console`).
 *
 * Cross-site request forgery: every POST must come from this origin (hono's `csrf` middleware
 * checks Origin / Sec-Fetch-Site) and, once signed in, carry the session's synchronizer token: an
 * HMAC keyed with the session id, which a page on another site can neither read nor compute (and
 * neither can a reader of the store, which holds only the id's hash).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { decodeJwt } from "jose";
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import type { Gateway } from "../core/gateway.ts";
import type { Subject } from "../core/types.ts";
import { consoleEntry } from "../decisionlog/index.ts";
import { hasAnyRole } from "../identity/roles.ts";
import { currentRevision } from "../pipeline/08-log.ts";
import type { ConsoleSession, ConsoleSessionUse } from "../store/types.ts";

export const SESSION_COOKIE = "writ_console";
export const CONSOLE_PATH = "/console";

export interface ConsoleRoles {
  reviewer: readonly string[];
  approver: readonly string[];
  /** Roles that may name another tenant (`roles.platform`; none by default). */
  platform?: readonly string[];
}

/** Console session lifetimes: the configuration's `console` section. */
export interface ConsoleSessionSettings {
  /** The longest a session lasts, in seconds. */
  session_max_age_s: number;
  /** Ends a session unused this long, in seconds (absent: no idle timeout). */
  idle_timeout_s?: number | undefined;
}

export const DEFAULT_SESSION_SETTINGS: ConsoleSessionSettings = { session_max_age_s: 8 * 60 * 60 };

/** Who is signed in, and what the console lets them do. */
export interface Viewer {
  subject: Subject;
  /** The synchronizer token every POST form of this session carries. */
  csrf: string;
  /** SHA-256 (hex) of the session id: the session's key in the store. */
  session: string;
  canReview: boolean;
  canApprove: boolean;
}

export interface ConsoleEnv {
  /**
   * `requestId` is set by the app's request-id middleware before the console (Writ's own id, as on
   * every entrance); `subject` (the viewer's) for the audit interceptor.
   */
  Variables: { viewer: Viewer; subject: Subject; requestId: string };
}

/** A session id as the cookie carries it: 32 random bytes, base64url. */
const sessionIdSchema = z.string().regex(/^[A-Za-z0-9_-]{43}$/);

export function csrfTokenOf(sessionId: string): string {
  return createHmac("sha256", sessionId).update("writ-console-csrf-v1").digest("base64url");
}

function hashOf(sessionId: string): string {
  return createHash("sha256").update(sessionId).digest("hex");
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function abilitiesOf(subject: Subject, roles: ConsoleRoles) {
  return { canReview: hasAnyRole(subject, roles.reviewer), canApprove: hasAnyRole(subject, roles.approver) };
}

/** Why `subject` may not use the console (no reviewer or approver role), or undefined. */
function roleRefusal(subject: Subject, roles: ConsoleRoles): WritError | undefined {
  const { canReview, canApprove } = abilitiesOf(subject, roles);
  if (canReview || canApprove) return undefined;
  return new WritError(
    "forbidden",
    `${subject.id} may not use the console: it needs one of the roles ${[...roles.reviewer, ...roles.approver].join(", ")}, and the token carries ${subject.roles.join(", ") || "none"}`,
    {
      suggestedFix:
        "ask your identity provider for a token with a reviewer or approver role, then sign in again",
    },
  );
}

function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:";
}

/** Writ's own id of the request (`requestId()` runs before every console route). */
function requestIdOf(c: Context<{ Variables: { requestId: string } }>): string {
  return c.var.requestId;
}

/** A sign-in or sign-out: who, which session (the entry keeps a prefix of its hash), until when. */
function logSession(gw: Gateway, c: Context, event: "sign_in" | "sign_out", session: ConsoleSession) {
  const did = event === "sign_in" ? "signed in to" : "signed out of";
  return gw.log.append(
    consoleEntry({
      event,
      actor: { id: session.subject, tenant: session.tenant, roles: session.roles },
      session: { idHash: session.id_hash, expiresAt: session.expires_at },
      code: `console_${event}`,
      message: `${session.subject} ${did} the console`,
      error: null,
      requestId: requestIdOf(c),
      policyRevision: currentRevision(gw),
    }),
  );
}

/** A refused sign-in: who (when the token verified) and why. */
function logRefusedSignIn(gw: Gateway, c: Context, refused: WritError, subject: Subject | undefined) {
  return gw.log.append(
    consoleEntry({
      event: "sign_in",
      actor: subject ?? null,
      code: "console_sign_in_refused",
      message: `console sign-in refused: ${refused.message}`,
      error: refused,
      requestId: requestIdOf(c),
      policyRevision: currentRevision(gw),
    }),
  );
}

/**
 * Verifies a pasted token, stores a session for it and sets the cookie (the session's id only),
 * logged; a refused token is logged too. The viewer of the new session.
 */
export async function startSession(
  gw: Gateway,
  c: Context,
  roles: ConsoleRoles,
  settings: ConsoleSessionSettings,
  token: string,
): Promise<Viewer> {
  let subject: Subject;
  try {
    subject = await gw.identity.verify(`Bearer ${token}`);
  } catch (error) {
    const refused = WritError.from(error, {
      message: "the token could not be verified",
      suggestedFix: "sign in again with a current token",
    });
    await logRefusedSignIn(gw, c, refused, undefined);
    throw refused;
  }
  const refused = roleRefusal(subject, roles);
  if (refused !== undefined) {
    await logRefusedSignIn(gw, c, refused, subject);
    throw refused;
  }
  const now = gw.now?.() ?? new Date();
  const tokenExp = decodeJwt(token).exp;
  const until = Math.min(
    now.getTime() + settings.session_max_age_s * 1000,
    tokenExp === undefined ? Number.POSITIVE_INFINITY : tokenExp * 1000,
  );
  const id = randomBytes(32).toString("base64url");
  const session: ConsoleSession = {
    id_hash: hashOf(id),
    subject: subject.id,
    tenant: subject.tenant,
    issuer: subject.issuer,
    roles: subject.roles,
    scopes: subject.scopes,
    created_at: now,
    last_seen_at: now,
    expires_at: new Date(until),
    revoked_at: null,
  };
  await gw.store.createConsoleSession(session);
  await logSession(gw, c, "sign_in", session);
  setCookie(c, SESSION_COOKIE, id, {
    path: CONSOLE_PATH,
    httpOnly: true,
    sameSite: "Strict",
    secure: isHttps(c),
    expires: session.expires_at,
  });
  return viewerOf(session, id, roles);
}

function viewerOf(session: ConsoleSession, id: string, roles: ConsoleRoles): Viewer {
  const subject: Subject = {
    id: session.subject,
    tenant: session.tenant,
    roles: session.roles,
    scopes: session.scopes,
    issuer: session.issuer,
    claims: {},
  };
  return { subject, csrf: csrfTokenOf(id), session: session.id_hash, ...abilitiesOf(subject, roles) };
}

/** Revokes the viewer's session in the store (every instance), logged, and clears the cookie. */
export async function endSession(gw: Gateway, c: Context, viewer: Viewer): Promise<void> {
  const revoked = await gw.store.revokeConsoleSession(viewer.session, gw.now?.());
  if (revoked !== undefined) await logSession(gw, c, "sign_out", revoked);
  clearCookie(c);
}

function clearCookie(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, { path: CONSOLE_PATH, secure: isHttps(c) });
}

const endedBecause: Record<Exclude<ConsoleSessionUse["state"], "active">, string> = {
  unknown: "you are not signed in to the console",
  revoked: "your console session was signed out",
  expired: "your console session expired",
  idle: "your console session ended after a time without use",
};

/** The session of the request's cookie, or why there is none. */
async function sessionOf(
  gw: Gateway,
  c: Context,
  roles: ConsoleRoles,
  settings: ConsoleSessionSettings,
): Promise<Viewer | string> {
  const id = sessionIdSchema.safeParse(getCookie(c, SESSION_COOKIE));
  if (!id.success) return endedBecause.unknown;
  const idle = settings.idle_timeout_s === undefined ? null : settings.idle_timeout_s * 1000;
  const use = await gw.store.useConsoleSession(hashOf(id.data), idle, gw.now?.());
  if (use.state === "idle") return `${endedBecause.idle} (the limit is ${settings.idle_timeout_s} s)`;
  if (use.state !== "active") return endedBecause[use.state];
  return viewerOf(use.session, id.data, roles);
}

/** The signed-in viewer, or undefined (for pages that only choose where to send the visitor). */
export async function currentViewer(
  gw: Gateway,
  c: Context,
  roles: ConsoleRoles,
  settings: ConsoleSessionSettings,
): Promise<Viewer | undefined> {
  const viewer = await sessionOf(gw, c, roles, settings);
  return typeof viewer === "string" ? undefined : viewer;
}

/** Requires a signed-in session; sets `viewer`. */
export function requireSession(
  gw: Gateway,
  roles: ConsoleRoles,
  settings: ConsoleSessionSettings,
): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const viewer = await sessionOf(gw, c, roles, settings);
    if (typeof viewer === "string") {
      if (getCookie(c, SESSION_COOKIE) !== undefined) clearCookie(c);
      throw new WritError("unauthenticated", viewer, {
        suggestedFix: "sign in again with a current token",
      });
    }
    c.set("viewer", viewer);
    c.set("subject", viewer.subject);
    await next();
  };
}

const refusedOrigin = new WritError("forbidden", "this form was not sent from the console's own pages", {
  suggestedFix: "open the console at its own address and submit the form from there",
});

/** Refuses a state-changing request from another origin (hono's `csrf`), as a console error page. */
export function sameOriginOnly(): MiddlewareHandler {
  const check = csrf();
  return async (c, next) => {
    let passed = false;
    try {
      await check(c, async () => {
        passed = true;
      });
    } catch (error) {
      if (error instanceof HTTPException && error.status === 403) throw refusedOrigin;
      throw error;
    }
    if (!passed) throw refusedOrigin;
    await next();
  };
}

/** Checks the synchronizer token of a POSTed form against the session's. */
export function checkCsrfToken(viewer: Viewer, given: unknown): void {
  const token = z.string().max(200).safeParse(given);
  if (!token.success || !sameToken(token.data, viewer.csrf)) {
    throw new WritError(
      "forbidden",
      "this form's anti-forgery token is missing or does not match your session",
      {
        suggestedFix: "reload the page (your session may have changed) and submit the form again",
      },
    );
  }
}

/** Which roles each part of the console needs, as a refusal that says so. */
export function requireAbility(viewer: Viewer, ability: "review" | "approve", roles: ConsoleRoles): void {
  const allowed = ability === "review" ? viewer.canReview : viewer.canApprove;
  if (allowed) return;
  const needed = ability === "review" ? roles.reviewer : roles.approver;
  throw new WritError(
    "forbidden",
    `${ability === "review" ? "reading the decision log" : "the approvals queue"} needs one of the roles ${needed.join(", ")}`,
    { suggestedFix: "sign in with a token that carries one of those roles" },
  );
}
