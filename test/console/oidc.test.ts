/**
 * OpenID Connect sign-in to the console, against a real provider (oidc-provider 8 on loopback,
 * its development login and consent pages) in real headless Chromium: the authorization code
 * flow with PKCE, the provider's JWT access token (RFC 9068, its audience the resource Writ asks
 * for) verified as a pasted token is, the reviewer's session scoped to the token's tenant, its
 * forms carrying the CSRF token; a user without a console role is refused, and a callback that
 * was not started in this browser (no PKCE verifier, or another state) starts nothing.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { hasChromium, launchChromium, postForm, withPage as withPageOf } from "./helpers.ts";

const RESOURCE = "https://writ.test/console";
const CLIENT_ID = "writ-console";
/** Who may sign in at the provider (any password): their tenant and roles, as access-token claims. */
const accounts: Record<string, { tnt: string; roles: string[] }> = {
  rita: { tnt: "acme", roles: ["reviewer"] },
  dave: { tnt: "acme", roles: ["developer"] },
};

let op: Server;
let issuer: string;
let gw: TestGateway;
let browser: Browser;

async function startProvider(redirectUri: string): Promise<void> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: "op-rs256", alg: "RS256", use: "sig" };
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    cookies: { keys: ["a-cookie-signing-key-for-tests-only"] },
    clients: [
      {
        client_id: CLIENT_ID,
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code"],
        response_types: ["code"],
        redirect_uris: [redirectUri],
      },
    ],
    pkce: { required: () => true },
    scopes: ["openid", "console"],
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
    features: {
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: "console",
          audience: RESOURCE,
          accessTokenTTL: 600,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } },
        }),
      },
    },
    extraTokenClaims: (_ctx: unknown, token: { accountId?: string }) => accounts[token.accountId ?? ""] ?? {},
  });
  op.on("request", provider.callback());
}

function withPage<T>(work: (page: Page) => Promise<T>): Promise<T> {
  return withPageOf(browser, work);
}

/** Signs in at the provider's development pages as `login`, from the console's sign-in page. */
async function signInAtProvider(page: Page, login: string): Promise<void> {
  await page.goto(`${gw.url}/console/sign-in`);
  await Promise.all([page.waitForURL(`${issuer}/**`), page.click("#oidc-sign-in")]);
  await page.fill("input[name=login]", login);
  await page.fill("input[name=password]", "any password");
  await Promise.all([page.waitForLoadState("load"), page.click("button[type=submit]")]);
  // The consent page (scopes openid and console, the resource).
  await Promise.all([page.waitForURL(`${gw.url}/console/**`), page.click("button[type=submit]")]);
}

describe.skipIf(!hasChromium)("OpenID Connect sign-in to the console, in Chromium", () => {
  beforeAll(async () => {
    op = createServer();
    await new Promise<void>((resolve) => op.listen(0, "127.0.0.1", resolve));
    issuer = `http://127.0.0.1:${(op.address() as AddressInfo).port}`;
    gw = await startTestGateway({
      configure: (document) => {
        const identity = document.identity as { issuers: unknown[] };
        return {
          ...document,
          identity: {
            ...identity,
            issuers: [
              ...identity.issuers,
              { issuer, audience: RESOURCE, algorithms: ["RS256"], jwks_uri: `${issuer}/jwks` },
            ],
          },
          console: { oidc: { issuer, client_id: CLIENT_ID, scope: "openid console", resource: RESOURCE } },
        };
      },
    });
    await startProvider(`${gw.url}/console/sign-in/oidc/callback`);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await new Promise((resolve) => op?.close(resolve));
  });

  it("a reviewer signs in at the provider and reads the log of her tenant; her forms carry the CSRF token", async () => {
    await withPage(async (page) => {
      await signInAtProvider(page, "rita");
      expect(new URL(page.url()).pathname).toBe("/console/decisions");
      const rows = page.locator("tbody tr");
      // Her own sign-in, in her tenant (acme); the demo tenant's decisions are not hers to see.
      expect(await rows.count()).toBe(1);
      expect(await rows.first().textContent()).toContain("console_sign_in");
      expect(await page.locator("main").textContent()).toContain("rita");
      const cookies = await page.context().cookies(`${gw.url}/console/sign-in/oidc/callback`);
      expect(cookies.map((c) => c.name)).toContain("writ_console");
      // The callback's PKCE cookie is gone once used.
      expect(cookies.map((c) => c.name)).not.toContain("writ_console_oidc");

      // The page's sign-out form carries the session's synchronizer token; without it, refused.
      const signOut = page.locator("form[action='/console/sign-out']");
      expect(await signOut.locator("input[name=csrf]").getAttribute("value")).toMatch(/^[\w-]{43}$/);
      await signOut.locator("input[name=csrf]").evaluate((input) => input.remove());
      const [refused] = await Promise.all([
        page.waitForResponse(/\/console\/sign-out$/),
        signOut.locator("button").click(),
      ]);
      expect(refused.status()).toBe(403);
      await page.goto(`${gw.url}/console/decisions`);
      await Promise.all([
        page.waitForURL(/\/console\/sign-in$/),
        page.click("form[action='/console/sign-out'] button"),
      ]);
    });
    const page = await gw.gateway.store.queryDecisions({ tenant: "acme" }, 10);
    expect(page.entries.map((e) => [e.subject, e.action, e.decision])).toEqual(
      expect.arrayContaining([
        ["rita", "console.sign_in", "allow"],
        ["rita", "console.sign_out", "allow"],
      ]),
    );
  }, 60_000);

  it("refuses someone the provider signs in but who has no console role", async () => {
    await withPage(async (page) => {
      await signInAtProvider(page, "dave");
      expect(new URL(page.url()).pathname).toBe("/console/sign-in/oidc/callback");
      expect(await page.locator("[role=alert]").textContent()).toMatch(/dave may not use the console/);
      const cookies = await page.context().cookies(`${gw.url}/console/`);
      expect(cookies.map((c) => c.name)).not.toContain("writ_console");
    });
  }, 60_000);

  it("starts nothing from a callback this browser did not start, and offers the token form too", async () => {
    const stray = await fetch(`${gw.url}/console/sign-in/oidc/callback?code=abc&state=xyz`, {
      redirect: "manual",
    });
    expect(stray.status).toBe(401);
    expect(await stray.text()).toContain("this sign-in was not started here");
    // Another state than the one this browser's cookie holds.
    const start = await fetch(`${gw.url}/console/sign-in/oidc`, { redirect: "manual" });
    expect(start.status).toBe(303);
    const location = new URL(start.headers.get("location") ?? "");
    expect(location.origin).toBe(issuer);
    expect(location.searchParams.get("code_challenge_method")).toBe("S256");
    expect(location.searchParams.get("resource")).toBe(RESOURCE);
    const pending = (start.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const forged = await fetch(
      `${gw.url}/console/sign-in/oidc/callback?code=abc&state=not-the-state&iss=${issuer}`,
      {
        redirect: "manual",
        headers: { cookie: pending },
      },
    );
    expect(forged.status).toBe(401);
    expect(await forged.text()).toMatch(/the identity provider did not sign you in/);
    const page = await (await fetch(`${gw.url}/console/sign-in`)).text();
    expect(page).toContain('href="/console/sign-in/oidc"');
    expect(page).toContain("npx writ token --sub");
    // The token form is still there: a pasted token signs in as before.
    expect(
      (await postForm(gw, "/console/sign-in", { token: "not a token" }, { origin: gw.url })).status,
    ).toBe(401);
  }, 60_000);
});
