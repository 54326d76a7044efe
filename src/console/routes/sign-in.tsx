/** Sign-in (a pasted bearer token, or OpenID Connect when configured), sign-out and the home page. */
import type { Hono } from "hono";
import { z } from "zod";
import { sendPage } from "../layout.tsx";
import type { ConsoleOidc } from "../oidc.ts";
import {
  CONSOLE_PATH,
  type ConsoleEnv,
  checkCsrfToken,
  currentViewer,
  endSession,
  startSession,
} from "../session.ts";
import { SignInPage } from "../signin.tsx";
import { type ConsoleContext, formOf } from "./context.ts";

const signInFormSchema = z.object({
  token: z
    .string()
    .max(16_384)
    .transform((text) => text.trim().replace(/^Bearer\s+/i, ""))
    .pipe(z.string().min(1, "paste your token")),
});

/** The sign-in page, with a problem to show and what to do about it. */
export function signInPage(oidc: ConsoleOidc | undefined, problem?: string, fix?: string) {
  return <SignInPage problem={problem} fix={fix} oidc={oidc !== undefined} />;
}

/** Where a viewer lands after signing in: decisions for reviewers, the approvals queue otherwise. */
function landing(viewer: { canReview: boolean }): string {
  return `${CONSOLE_PATH}/${viewer.canReview ? "decisions" : "approvals"}`;
}

export function signInRoutes(
  app: Hono<ConsoleEnv>,
  ctx: ConsoleContext,
  oidc: ConsoleOidc | undefined,
): void {
  const { gw, roles, sessions } = ctx;

  app.get("/", async (c) => {
    const viewer = await currentViewer(gw, c, roles, sessions);
    if (viewer === undefined) return c.redirect(`${CONSOLE_PATH}/sign-in`, 303);
    return c.redirect(landing(viewer), 303);
  });

  app.get("/sign-in", (c) => sendPage(c, signInPage(oidc)));

  app.post("/sign-in", async (c) => {
    const form = signInFormSchema.safeParse(await formOf(c));
    if (!form.success) return sendPage(c, signInPage(oidc, "paste your bearer token to sign in"), 400);
    const viewer = await startSession(gw, c, roles, sessions, form.data.token);
    return c.redirect(landing(viewer), 303);
  });

  if (oidc !== undefined) {
    app.get("/sign-in/oidc", (c) => oidc.start(c));
    app.get("/sign-in/oidc/callback", async (c) => {
      const viewer = await oidc.finish(gw, c, roles, sessions);
      return c.redirect(landing(viewer), 303);
    });
  }

  app.post("/sign-out", async (c) => {
    const viewer = c.get("viewer");
    checkCsrfToken(viewer, (await formOf(c)).csrf);
    await endSession(gw, c, viewer);
    return c.redirect(`${CONSOLE_PATH}/sign-in`, 303);
  });
}
