/**
 * Server-side console sessions (issue 15), against real gateways and in real headless Chromium:
 * the cookie holds an opaque id, never the JWT; sign-out revokes the session, so a copy of the old
 * cookie gets the sign-in page; a session started on one instance is honored and revoked on another
 * sharing the store; a session ends at min(token expiry, the configured maximum) and, when
 * configured, after a time without use; sign-in (also refused) and sign-out are on the log.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { logEntries } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import {
  csrfTokenIn,
  hasChromium,
  launchChromium,
  postForm,
  sessionCookie,
  signIn,
  withPage,
} from "./helpers.ts";

/** Three base64url parts separated by dots: the shape of a JWS / JWT. */
const JWT_LIKE = /[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/;

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});

afterAll(async () => {
  await gw?.close();
});

async function page(on: TestGateway, route: string, cookie: string) {
  const answer = await fetch(`${on.url}${route}`, { redirect: "manual", headers: { cookie } });
  return { status: answer.status, text: await answer.text() };
}

/** The `Expires` of a Set-Cookie header, in milliseconds since the epoch. */
function expiresOf(setCookie: string): number {
  const expires = /Expires=([^;]+)/.exec(setCookie)?.[1];
  if (expires === undefined) throw new Error(`no Expires in ${setCookie}`);
  return Date.parse(expires);
}

describe.skipIf(!hasChromium)("console sessions in Chromium", () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
  });

  it("the cookie holds no JWT; after sign-out a replay of the old cookie gets the sign-in page", async () => {
    const token = await gw.token("rita", { roles: ["reviewer"] });
    const stolen = await withPage(browser, async (p) => {
      await signIn(p, gw, token);
      expect(new URL(p.url()).pathname).toBe("/console/decisions");
      const cookies = await p.context().cookies();
      expect(cookies.map((c) => c.name)).toEqual(["writ_console"]);
      const [cookie] = cookies;
      if (cookie === undefined) throw new Error("no cookie");
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/console" });
      expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(cookie.value).not.toMatch(JWT_LIKE);
      expect(token).not.toContain(cookie.value);
      for (const part of token.split(".")) expect(cookie.value).not.toContain(part);
      // The session works for a copy of the cookie outside the browser, until sign-out.
      const copy = `writ_console=${cookie.value}`;
      expect((await page(gw, "/console/decisions", copy)).status).toBe(200);

      await Promise.all([p.waitForURL(/\/console\/sign-in$/), p.click("button:has-text('Sign out')")]);
      expect(await p.context().cookies()).toEqual([]);
      const back = await p.goto(`${gw.url}/console/decisions`);
      expect(back?.status()).toBe(401);
      return copy;
    });
    const replay = await page(gw, "/console/decisions", stolen);
    expect(replay.status).toBe(401);
    expect(replay.text).toContain("your console session was signed out");
    expect(replay.text).toContain('action="/console/sign-in"');
    const home = await fetch(`${gw.url}/console`, { redirect: "manual", headers: { cookie: stolen } });
    expect(home.headers.get("location")).toBe("/console/sign-in");

    const events = (await logEntries(gw, { subject: "rita" })).filter((e) => e.path === "writ/console");
    expect(events).toMatchObject([
      {
        action: "console.sign_out",
        decision: "allow",
        tenant: "demo",
        reasons: [{ code: "console_sign_out" }],
      },
      {
        action: "console.sign_in",
        decision: "allow",
        tenant: "demo",
        reasons: [{ code: "console_sign_in" }],
      },
    ]);
    expect(JSON.stringify(events)).not.toContain(stolen.slice("writ_console=".length));
  });
});

describe("console sessions", () => {
  it("a refused sign-in is logged with who tried and why", async () => {
    const token = await gw.token("victor", { roles: ["developer"] });
    const refused = await postForm(gw, "/console/sign-in", { token }, { origin: gw.url });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("set-cookie")).toBeNull();
    const forged = await postForm(gw, "/console/sign-in", { token: "not.a.jwt" }, { origin: gw.url });
    expect(forged.status).toBe(401);
    const victor = (await logEntries(gw, { subject: "victor" })).filter((e) => e.path === "writ/console");
    expect(victor).toMatchObject([
      {
        action: "console.sign_in",
        decision: "deny",
        error: "forbidden",
        reasons: [{ code: "console_sign_in_refused" }],
      },
    ]);
  });

  it("keys its entries by Writ's own request id, never the caller's X-Request-Id (issue 27)", async () => {
    const token = await gw.token("ivan", { roles: ["reviewer"] });
    const answer = await postForm(
      gw,
      "/console/sign-in",
      { token },
      { origin: gw.url, "x-request-id": "chosen-by-caller" },
    );
    expect(answer.status).toBe(303);
    const own = answer.headers.get("x-request-id");
    expect(own).toMatch(/^[0-9a-f-]{36}$/);
    const [entry] = (await logEntries(gw, { subject: "ivan" })).filter((e) => e.path === "writ/console");
    expect(entry).toMatchObject({ action: "console.sign_in", request_id: own });
  });

  it("lasts until the token expires when that comes before the configured maximum", async () => {
    const exp = Math.floor(Date.now() / 1000) + 120;
    const token = await gw.token("rita", { roles: ["reviewer"], claims: { exp } });
    const { setCookie } = await sessionCookie(gw, token);
    expect(expiresOf(setCookie)).toBe(exp * 1000);
  });

  it("a session on one instance is honored and revoked on another sharing the store", async () => {
    const sqlite = z.object({ sqlite: z.string() }).parse(gw.parts.config.store).sqlite;
    const other = await startTestGateway({
      configure: (document) => ({
        ...document,
        store: { ...z.record(z.string(), z.unknown()).parse(document.store), sqlite },
      }),
    });
    try {
      const { cookie } = await sessionCookie(gw, await gw.token("carol", { roles: ["maintainer"] }));
      const queue = await page(other, "/console/approvals", cookie);
      expect(queue.status).toBe(200);
      expect(queue.text).toContain("carol (demo)");
      const signOut = await postForm(
        other,
        "/console/sign-out",
        { csrf: csrfTokenIn(queue.text) },
        { cookie, origin: other.url },
      );
      expect(signOut.status).toBe(303);
      const replay = await page(gw, "/console/approvals", cookie);
      expect(replay.status).toBe(401);
      expect(replay.text).toContain("your console session was signed out");
    } finally {
      await other.close();
    }
  });
});

describe("configured session lifetimes", () => {
  let short: TestGateway;

  beforeAll(async () => {
    short = await startTestGateway({
      configure: (document) => ({ ...document, console: { session_max_age_s: 60, idle_timeout_s: 1 } }),
    });
  });

  afterAll(async () => {
    await short?.close();
  });

  it("caps a session at session_max_age_s and ends it after idle_timeout_s without use", async () => {
    const before = Date.now();
    const { cookie, setCookie } = await sessionCookie(
      short,
      await short.token("rita", { roles: ["reviewer"] }),
    );
    expect(expiresOf(setCookie)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 60_000);
    expect(expiresOf(setCookie)).toBeLessThanOrEqual(Date.now() + 60_000);
    expect((await page(short, "/console/decisions", cookie)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const idle = await page(short, "/console/decisions", cookie);
    expect(idle.status).toBe(401);
    expect(idle.text).toContain("your console session ended after a time without use (the limit is 1 s)");
  });
});
