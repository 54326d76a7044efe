/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) for the MCP endpoint, as the MCP
 * authorization spec asks: a client refused with 401 finds `resource_metadata` in the
 * `WWW-Authenticate` header, reads this document, and learns which authorization servers issue
 * tokens Writ accepts (the configured identity issuers), for which resource (`mcp.resource`, the
 * value tokens must carry in `aud`) and with which scopes (`mcp.scopes_supported`).
 */
import { bearerChallenge, type ProtectedResource } from "../identity/index.ts";

/** The MCP endpoint as a protected resource: the configured URI, else `https://writ.example/mcp` for a request to that origin. */
export function mcpResourceUrl(requestUrl: string, configured?: ProtectedResource): string {
  return configured?.resource ?? `${new URL(requestUrl).origin}/mcp`;
}

/** Where the endpoint's metadata lives (RFC 9728 section 3.1: the well-known path, then the resource's path). */
export function resourceMetadataUrl(requestUrl: string, configured?: ProtectedResource): string {
  const resource = new URL(mcpResourceUrl(requestUrl, configured));
  const path = resource.pathname === "/" ? "" : resource.pathname;
  return `${resource.origin}/.well-known/oauth-protected-resource${path}`;
}

/**
 * The `WWW-Authenticate` challenge of a 401 or 403 from `/mcp` (RFC 6750 section 3): the metadata
 * URL always; the scopes to request (the configured ones for a 401, every scope the operation
 * needs for a 403 `insufficient_scope`); the error and its description when a token was sent and
 * refused (a request without credentials gets no error code).
 */
export function mcpChallenge(
  requestUrl: string,
  configured: ProtectedResource | undefined,
  refusal?: { code: "invalid_token" | "insufficient_scope"; description: string; scopes?: readonly string[] },
): string {
  return bearerChallenge({
    resourceMetadata: resourceMetadataUrl(requestUrl, configured),
    scopes: refusal?.scopes ?? configured?.scopes,
    error: refusal === undefined ? undefined : { code: refusal.code, description: refusal.description },
  });
}

export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  bearer_methods_supported: string[];
  resource_name: string;
  scopes_supported?: string[];
}

export function protectedResourceMetadata(
  requestUrl: string,
  identity: { issuers: readonly string[]; protectedResource?: ProtectedResource | undefined },
): ProtectedResourceMetadata {
  const configured = identity.protectedResource;
  return {
    resource: mcpResourceUrl(requestUrl, configured),
    authorization_servers: [...identity.issuers],
    bearer_methods_supported: ["header"],
    resource_name: "Writ MCP endpoint",
    ...(configured?.scopes === undefined ? {} : { scopes_supported: [...configured.scopes] }),
  };
}
