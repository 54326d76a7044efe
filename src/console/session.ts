/**
 * Console sessions. A reviewer or approver signs in by pasting their bearer JWT; Writ verifies it
 * with the same IdentityVerifier as the API and keeps it in an HttpOnly, SameSite=Strict cookie
 * scoped to /console (Secure over https) that expires with the token. Every request verifies the
 * token again (the verifier caches), so an expired or revoked key ends the session.
 *
 * Cross-site request forgery: every POST must come from this origin (hono's `csrf` middleware
 * checks Origin / Sec-Fetch-Site) and, once signed in, carry the session's synchronizer token: an
 * HMAC of the session token, which a page on another site can neither read nor compute.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { decodeJwt } from "jose";
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import type { Gateway } from "../core/gateway.ts";
import type { Subject } from "../core/types.ts";

export const SESSION_COOKIE = "writ_console";
export const CONSOLE_PATH = "/console";

export interface ConsoleRoles {
  reviewer: readonly string[];
  approver: readonly string[];
  /** Roles that may name another tenant (`roles.platform`; none by default). */
  platform?: readonly string[];
}

/** Who is signed in, and what the console lets them do. */
export interface Viewer {
  subject: Subject;
  /** The synchronizer token every POST form of this session carries. */
  csrf: string;
  canReview: boolean;
  canApprove: boolean;
}

export interface ConsoleEnv {
  Variables: { viewer: Viewer };
}

const tokenSchema = z.string().min(1).max(16_384);

export function csrfTokenOf(sessionToken: string): string {
  return createHmac("sha256", sessionToken).update("writ-console-csrf-v1").digest("base64url");
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function hasAny(subject: Subject, roles: readonly string[]): boolean {
  return subject.roles.some((role) => roles.includes(role));
}

/** Verifies a pasted or stored token and checks that it carries a reviewer or approver role. */
export async function viewerOf(gw: Gateway, roles: ConsoleRoles, token: string): Promise<Viewer> {
  const subject = await gw.identity.verify(`Bearer ${token}`);
  const viewer = {
    subject,
    csrf: csrfTokenOf(token),
    canReview: hasAny(subject, roles.reviewer),
    canApprove: hasAny(subject, roles.approver),
  };
  if (!viewer.canReview && !viewer.canApprove) {
    throw new WritError(
      "forbidden",
      `${subject.id} may not use the console: it needs one of the roles ${[...roles.reviewer, ...roles.approver].join(", ")}, and the token carries ${subject.roles.join(", ") || "none"}`,
      {
        suggestedFix:
          "ask your identity provider for a token with a reviewer or approver role, then sign in again",
      },
    );
  }
  return viewer;
}

function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:";
}

/** Stores the verified token in the session cookie, expiring with the token. */
export function startSession(c: Context, token: string): void {
  const exp = decodeJwt(token).exp;
  setCookie(c, SESSION_COOKIE, token, {
    path: CONSOLE_PATH,
    httpOnly: true,
    sameSite: "Strict",
    secure: isHttps(c),
    ...(exp === undefined ? {} : { expires: new Date(exp * 1000) }),
  });
}

export function endSession(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, { path: CONSOLE_PATH, secure: isHttps(c) });
}

function signInAgain(message: string): WritError {
  return new WritError("unauthenticated", message, {
    suggestedFix: "sign in again with a current token",
  });
}

/** Requires a signed-in session; sets `viewer`. */
export function requireSession(gw: Gateway, roles: ConsoleRoles): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const stored = tokenSchema.safeParse(getCookie(c, SESSION_COOKIE));
    if (!stored.success) throw signInAgain("you are not signed in to the console");
    let viewer: Viewer;
    try {
      viewer = await viewerOf(gw, roles, stored.data);
    } catch (error) {
      endSession(c);
      if (error instanceof WritError && error.category === "unauthenticated") {
        throw signInAgain(`your console session ended: ${error.message}`);
      }
      throw error;
    }
    c.set("viewer", viewer);
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
