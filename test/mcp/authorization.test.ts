/**
 * A spec-following MCP client discovers the authorization server from a 401 alone, over real
 * HTTP on loopback: the SDK's client with its client_credentials provider POSTs to /mcp without a
 * token, follows `WWW-Authenticate` to the protected resource metadata (RFC 9728), then to the
 * authorization server's metadata (a real oidc-provider), asks its token endpoint for a token with
 * `resource` = Writ's /mcp (RFC 8707), and lists tools with it. A token the same issuer made for
 * another resource is refused at /mcp (audience binding) though the HTTP API accepts it.
 *
 * Claims → Writ subject: oidc-provider puts the client id in `sub` for client_credentials (Writ's
 * default subject claim); tenant and roles are not OAuth claims, so the authorization server adds
 * them to access tokens (here `extraTokenClaims` adds `tnt` and `roles`, Writ's default claim
 * names; other names are mapped under the issuer's `claims:` in Writ's config).
 */

import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { freePort, startTestGateway, type TestGateway } from "../support/gateway.ts";
import { type OidcServer, startOidcServer } from "../support/oidc.ts";

const OTHER_RESOURCE = "https://other.example/api";
const SCOPE = "mcp:tools";

let oidc: OidcServer;
let gw: TestGateway;
let resource: string;

const recordSchema = z.record(z.string(), z.unknown());

beforeAll(async () => {
  const port = await freePort();
  resource = `http://127.0.0.1:${port}/mcp`;
  oidc = await startOidcServer({
    resources: [resource, OTHER_RESOURCE],
    scope: SCOPE,
    claims: { tnt: "demo", roles: ["developer"] },
  });
  gw = await startTestGateway({
    port,
    configure: (document) => {
      const identity = recordSchema.parse(document.identity);
      const issuers = z.array(z.unknown()).parse(identity.issuers);
      return {
        ...document,
        identity: {
          ...identity,
          // First: the SDK asks the first of the metadata's authorization servers.
          issuers: [
            // The issuer's audience admits both resources, so that /mcp's own binding is what refuses.
            {
              issuer: oidc.issuer,
              audience: [resource, OTHER_RESOURCE],
              algorithms: ["RS256"],
              jwks_uri: oidc.jwksUri,
            },
            ...issuers,
          ],
        },
        mcp: { ...recordSchema.parse(document.mcp ?? {}), resource, scopes_supported: [SCOPE] },
      };
    },
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await oidc?.close();
});

/** A token straight from the token endpoint (client_credentials) for `target`. */
async function tokenFor(target: string): Promise<string> {
  const response = await fetch(oidc.tokenEndpoint, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${oidc.client.id}:${oidc.client.secret}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ grant_type: "client_credentials", resource: target, scope: SCOPE }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return z.object({ access_token: z.string() }).parse(await response.json()).access_token;
}

describe("MCP authorization discovery", () => {
  it("the 401 and the metadata name the resource, its scope and the issuer", async () => {
    const answer = await gw.request("POST", "/mcp", {
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers: { accept: "application/json, text/event-stream" },
    });
    expect(answer.status).toBe(401);
    const challenge = answer.headers.get("www-authenticate") ?? "";
    expect(challenge).toContain(
      `resource_metadata="http://127.0.0.1:${new URL(resource).port}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(challenge).toContain(`scope="${SCOPE}"`);
    expect(challenge).not.toContain("error=");
    const metadata = await gw.request("GET", "/.well-known/oauth-protected-resource/mcp");
    expect(metadata.json).toMatchObject({
      resource,
      authorization_servers: expect.arrayContaining([oidc.issuer]),
      scopes_supported: [SCOPE],
    });
  });

  it("the SDK's client goes from the 401 to a token for Writ's resource, then lists tools", async () => {
    const authProvider = new ClientCredentialsProvider({
      clientId: oidc.client.id,
      clientSecret: oidc.client.secret,
      expectedIssuer: oidc.issuer,
    });
    const client = new Client({ name: "authorization-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain("repo_search");
      const token = authProvider.tokens()?.access_token ?? "";
      const claims = recordSchema.parse(
        JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()),
      );
      expect(claims).toMatchObject({ iss: oidc.issuer, aud: resource, sub: oidc.client.id, tnt: "demo" });
    } finally {
      await client.close();
    }
  });

  it("a token for another resource is refused at /mcp with invalid_token, though the issuer accepts it", async () => {
    const other = await tokenFor(OTHER_RESOURCE);
    const answer = await gw.request("POST", "/mcp", {
      token: other,
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers: { accept: "application/json, text/event-stream" },
    });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("www-authenticate")).toMatch(
      /error="invalid_token", error_description="the token was not issued for/,
    );
    expect(answer.json).toMatchObject({
      category: "unauthenticated",
      suggested_fix: expect.stringContaining("resource="),
    });
    // The HTTP API is not the MCP resource: the issuer's audience is all it asks for.
    expect((await gw.request("GET", "/v1/tools", { token: other })).status).toBe(200);
    // And a token for /mcp works there.
    const mine = await tokenFor(resource);
    const listed = await gw.request("POST", "/mcp", {
      token: mine,
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers: { accept: "application/json, text/event-stream" },
    });
    expect(listed.status, listed.text).toBe(200);
  });
});
