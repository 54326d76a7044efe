/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) for the MCP endpoint, as the MCP
 * authorization spec asks: a client refused with 401 finds `resource_metadata` in the
 * `WWW-Authenticate` header, reads this document, and learns which authorization servers issue
 * tokens Writ accepts (the configured identity issuers).
 */

/** The MCP endpoint as a protected resource: `https://writ.example/mcp` for a request to that origin. */
export function mcpResourceUrl(requestUrl: string): string {
  return `${new URL(requestUrl).origin}/mcp`;
}

/** Where the endpoint's metadata lives (RFC 9728 section 3.1: the well-known path, then the resource's path). */
export function resourceMetadataUrl(requestUrl: string): string {
  return `${new URL(requestUrl).origin}/.well-known/oauth-protected-resource/mcp`;
}

/** The `WWW-Authenticate` challenge of a 401 from `/mcp`. */
export function bearerChallenge(requestUrl: string): string {
  return `Bearer realm="writ", resource_metadata="${resourceMetadataUrl(requestUrl)}"`;
}

export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  bearer_methods_supported: string[];
  resource_name: string;
}

export function protectedResourceMetadata(
  requestUrl: string,
  issuers: readonly string[],
): ProtectedResourceMetadata {
  return {
    resource: mcpResourceUrl(requestUrl),
    authorization_servers: [...issuers],
    bearer_methods_supported: ["header"],
    resource_name: "Writ MCP endpoint",
  };
}
