/**
 * The web console at /console (server-rendered with hono/jsx; no scripts): the decision list and
 * decision pages for reviewers, the approvals queue for approvers, sign-in with a bearer JWT.
 * Mounted by the HTTP app with `app.route("/console", consoleRoutes(gw, roles))`.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { WritError } from "../core/errors.ts";
import type { Gateway } from "../core/gateway.ts";
import { ChainMonitor } from "../decisionlog/index.ts";
import { ErrorPage, sendPage } from "./layout.tsx";
import { ConsoleOidc, type ConsoleOidcSettings, OIDC_CALLBACK_PATH, OIDC_START_PATH } from "./oidc.ts";
import { UPLOAD_LIMIT_BYTES } from "./policy-changes.ts";
import { approvalRoutes } from "./routes/approvals.tsx";
import type { ConsoleContext } from "./routes/context.ts";
import { decisionRoutes } from "./routes/decisions.tsx";
import { policyRoutes } from "./routes/policy.tsx";
import { signInPage, signInRoutes } from "./routes/sign-in.tsx";
import {
  CONSOLE_PATH,
  type ConsoleEnv,
  type ConsoleRoles,
  type ConsoleSessionSettings,
  DEFAULT_SESSION_SETTINGS,
  requireSession,
  sameOriginOnly,
} from "./session.ts";

export type { ConsoleRoles, ConsoleSessionSettings } from "./session.ts";

/** The largest form the console accepts (a pasted token is the biggest field). */
const FORM_LIMIT_BYTES = 32 * 1024;
const UPLOAD_PATH = `${CONSOLE_PATH}/policy/candidates`;
const PUBLIC_PATHS = new Set([
  CONSOLE_PATH,
  `${CONSOLE_PATH}/`,
  `${CONSOLE_PATH}/sign-in`,
  OIDC_START_PATH,
  OIDC_CALLBACK_PATH,
]);

/** The console's settings: session lifetimes, and OpenID Connect sign-in when configured. */
export type ConsoleSettings = ConsoleSessionSettings & { oidc?: ConsoleOidcSettings | undefined };

/** Errors as pages: an unauthenticated viewer (or a failed OpenID sign-in) sees the sign-in page. */
function errorPages(app: Hono<ConsoleEnv>, oidc: ConsoleOidc | undefined): void {
  app.onError((error, c) => {
    const e = WritError.from(error, {
      message: "the console failed while handling the request",
      suggestedFix: "retry later; if it persists, tell the operator the time of the request",
    });
    if (e.category === "internal") console.error("console error:", error);
    if (e.category === "unauthenticated")
      return sendPage(c, signInPage(oidc, e.message, e.suggestedFix), 401);
    if (c.req.path.startsWith(OIDC_START_PATH)) {
      return sendPage(c, signInPage(oidc, e.message, e.suggestedFix), e.httpStatus as ContentfulStatusCode);
    }
    return sendPage(
      c,
      <ErrorPage error={e} viewer={c.get("viewer")} />,
      e.httpStatus as ContentfulStatusCode,
    );
  });
}

function tooLarge(maxSize: number, what: string, suggestedFix: string) {
  return bodyLimit({
    maxSize,
    onError: () => {
      throw new WritError("payload_too_large", `${what} is at most ${maxSize} bytes`, { suggestedFix });
    },
  });
}

/**
 * Every POST from the console's own origin within its size limit (an uploaded candidate policy has
 * a larger one than a form), and every page but sign-in behind a session.
 */
function guards(app: Hono<ConsoleEnv>, ctx: ConsoleContext): void {
  const originCheck = sameOriginOnly();
  const session = requireSession(ctx.gw, ctx.roles, ctx.sessions);
  const formLimit = tooLarge(FORM_LIMIT_BYTES, "a console form", "shorten the text you entered");
  const uploadLimit = tooLarge(
    UPLOAD_LIMIT_BYTES,
    "an uploaded policy",
    "upload the policy's .rego and data files only, or its bundle",
  );
  app.use("*", async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const limit = c.req.path === UPLOAD_PATH ? uploadLimit : formLimit;
    return originCheck(c, async () => {
      await limit(c, next);
    });
  });
  app.use("*", async (c, next) => (PUBLIC_PATHS.has(c.req.path) ? next() : session(c, next)));
}

export function consoleRoutes(
  gw: Gateway,
  roles: ConsoleRoles,
  sessions: ConsoleSettings = DEFAULT_SESSION_SETTINGS,
): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const oidc = sessions.oidc === undefined ? undefined : new ConsoleOidc(sessions.oidc);
  const ctx: ConsoleContext = { gw, roles, sessions, chain: new ChainMonitor(gw.log) };
  errorPages(app, oidc);
  guards(app, ctx);
  signInRoutes(app, ctx, oidc);
  decisionRoutes(app, ctx);
  policyRoutes(app, ctx);
  approvalRoutes(app, ctx);
  app.all("*", (c) => {
    throw new WritError("not_found", `the console has no page ${c.req.path}`, {
      suggestedFix: "start from the console's home page",
    });
  });
  return app;
}
