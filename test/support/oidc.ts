/**
 * A real OAuth 2.1 / OIDC authorization server on loopback (oidc-provider 8), for testing Writ as
 * a protected resource: one confidential client using the client_credentials grant, RFC 8707
 * resource indicators for the resources it is given, and access tokens that are JWTs (RFC 9068)
 * whose `aud` is the requested resource, signed with an RS256 key served at `<issuer>/jwks`.
 * `claims` are added to every access token (Writ's tenant and roles).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider, { errors } from "oidc-provider";

export interface OidcServer {
  issuer: string;
  jwksUri: string;
  tokenEndpoint: string;
  client: { id: string; secret: string };
  close(): Promise<void>;
}

export interface OidcOptions {
  /** Resource indicators tokens may be issued for. */
  resources: readonly string[];
  /** The scope tokens carry. */
  scope: string;
  /** Extra claims in every access token. */
  claims: Record<string, unknown>;
}

export async function startOidcServer(options: OidcOptions): Promise<OidcServer> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: "test-rs256", alg: "RS256", use: "sig" };
  const client = { id: "writ-test-agent", secret: "a-client-secret-long-enough-for-tests" };
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    cookies: { keys: ["a-cookie-signing-key-for-tests-only"] },
    ttl: { ClientCredentials: 600 },
    clients: [
      {
        client_id: client.id,
        client_secret: client.secret,
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: "client_secret_basic",
        scope: options.scope,
      },
    ],
    scopes: options.scope.split(" "),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => {
          if (!options.resources.includes(resource)) throw new errors.InvalidTarget();
          return {
            scope: options.scope,
            audience: resource,
            accessTokenTTL: 600,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "RS256" } },
          };
        },
      },
    },
    extraTokenClaims: () => options.claims,
  });
  server.on("request", provider.callback());
  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    tokenEndpoint: `${issuer}/token`,
    client,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
