/**
 * OpenID Connect sign-in to the console (`console.oidc`): the authorization code flow with PKCE
 * (S256) against the configured issuer, through openid-client (panva's certified relying party).
 *
 * `GET /console/sign-in/oidc` sends the browser to the provider with a fresh PKCE challenge and
 * `state`, whose verifier and value wait in a short-lived HttpOnly cookie scoped to the callback
 * (SameSite=Lax: the provider's redirect back is a top-level navigation from another site).
 * `GET /console/sign-in/oidc/callback` checks `state`, redeems the code with the verifier, and
 * starts a console session with the access token exactly as a pasted token starts one
 * (`startSession`: the identity verifier's issuer, audience, keys and expiry, the reviewer or
 * approver role, the tenant the token carries; logged, and refusals too). So the provider's access
 * tokens must be ones the gateway accepts: the issuer under `identity.issuers`, with the audience
 * there (`console.oidc.resource` asks for it as an RFC 8707 resource indicator).
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import * as client from "openid-client";
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import type { Gateway } from "../core/gateway.ts";
import {
  CONSOLE_PATH,
  type ConsoleRoles,
  type ConsoleSessionSettings,
  startSession,
  type Viewer,
} from "./session.ts";

/** The `console.oidc` section of the configuration. */
export interface ConsoleOidcSettings {
  /** The provider's issuer URL (its discovery document is `<issuer>/.well-known/openid-configuration`). */
  issuer: string;
  client_id: string;
  /** The environment variable holding the client's secret; without it, a public client (PKCE only). */
  client_secret_env?: string | undefined;
  /** The scopes asked for (default `openid`). */
  scope: string;
  /** An RFC 8707 resource indicator: the audience of the access token the gateway verifies. */
  resource?: string | undefined;
  /** Where the provider sends the browser back (default: this request's origin + the callback path). */
  redirect_uri?: string | undefined;
}

export const OIDC_START_PATH = `${CONSOLE_PATH}/sign-in/oidc`;
export const OIDC_CALLBACK_PATH = `${OIDC_START_PATH}/callback`;
const PENDING_COOKIE = "writ_console_oidc";
/** How long a sign-in may take at the provider, in seconds. */
const PENDING_MAX_AGE_S = 10 * 60;

const pendingSchema = z.object({ state: z.string().min(16), verifier: z.string().min(43) });

const isLoopback = (url: URL) => ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);

/** The relying party of one console: the provider's metadata, discovered once on first use. */
export class ConsoleOidc {
  #configuration: Promise<client.Configuration> | undefined;

  constructor(readonly settings: ConsoleOidcSettings) {}

  #discover(): Promise<client.Configuration> {
    this.#configuration ??= this.#fetchConfiguration().catch((error: unknown) => {
      this.#configuration = undefined; // a provider that was down is asked again next time
      throw new WritError(
        "backend_unavailable",
        `the identity provider ${this.settings.issuer} could not be reached`,
        {
          suggestedFix: `check console.oidc.issuer and that the provider answers (${error instanceof Error ? error.message : String(error)}), or paste a token`,
        },
      );
    });
    return this.#configuration;
  }

  async #fetchConfiguration(): Promise<client.Configuration> {
    const { issuer, client_id, client_secret_env } = this.settings;
    const secret = client_secret_env === undefined ? undefined : process.env[client_secret_env];
    if (client_secret_env !== undefined && !secret) {
      throw new Error(`${client_secret_env} is not set in the environment`);
    }
    const url = new URL(issuer);
    // Plain http only on loopback (a provider on the same machine, as in development and tests).
    const options =
      url.protocol === "http:" && isLoopback(url) ? { execute: [client.allowInsecureRequests] } : {};
    return client.discovery(
      url,
      client_id,
      undefined,
      secret === undefined ? client.None() : client.ClientSecretBasic(secret),
      options,
    );
  }

  #redirectUri(c: Context): string {
    return this.settings.redirect_uri ?? new URL(OIDC_CALLBACK_PATH, c.req.url).href;
  }

  /** Redirects to the provider's authorization endpoint, with PKCE and state kept in a cookie. */
  async start(c: Context): Promise<Response> {
    const configuration = await this.#discover();
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const parameters: Record<string, string> = {
      redirect_uri: this.#redirectUri(c),
      scope: this.settings.scope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      ...(this.settings.resource === undefined ? {} : { resource: this.settings.resource }),
    };
    setCookie(c, PENDING_COOKIE, `${state}.${verifier}`, {
      path: OIDC_CALLBACK_PATH,
      httpOnly: true,
      sameSite: "Lax",
      secure: new URL(c.req.url).protocol === "https:",
      maxAge: PENDING_MAX_AGE_S,
    });
    return c.redirect(client.buildAuthorizationUrl(configuration, parameters).href, 303);
  }

  /**
   * The provider's redirect back: the code redeemed with the PKCE verifier (state checked), and a
   * console session started with the access token as a pasted token starts one.
   */
  async finish(
    gw: Gateway,
    c: Context,
    roles: ConsoleRoles,
    sessions: ConsoleSessionSettings,
  ): Promise<Viewer> {
    const [state = "", verifier = ""] = (getCookie(c, PENDING_COOKIE) ?? "").split(".");
    deleteCookie(c, PENDING_COOKIE, { path: OIDC_CALLBACK_PATH });
    const pending = pendingSchema.safeParse({ state, verifier });
    if (!pending.success) {
      throw new WritError("unauthenticated", "this sign-in was not started here, or took too long", {
        suggestedFix: "start again with “Sign in with your identity provider”",
      });
    }
    const configuration = await this.#discover();
    let accessToken: string;
    try {
      // The callback's own URL as the provider sent it (code, state, iss), under the redirect URI.
      const current = new URL(this.#redirectUri(c));
      current.search = new URL(c.req.url).search;
      const tokens = await client.authorizationCodeGrant(configuration, current, {
        pkceCodeVerifier: pending.data.verifier,
        expectedState: pending.data.state,
      });
      accessToken = tokens.access_token;
    } catch (error) {
      throw new WritError(
        "unauthenticated",
        `the identity provider did not sign you in: ${error instanceof Error ? error.message : String(error)}`,
        { suggestedFix: "start again, or paste a token" },
      );
    }
    return startSession(gw, c, roles, sessions, accessToken);
  }
}
