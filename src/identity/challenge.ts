/**
 * The `WWW-Authenticate: Bearer` challenge of RFC 6750 section 3, for every refusal of a bearer
 * token Writ answers: the 401 of a missing or refused token (`invalid_token`), and the 403 of a
 * token that lacks a scope the policy requires (`insufficient_scope`, section 3.1: step-up), with
 * the RFC 9728 metadata URL where the resource has one (`/mcp`).
 */

export interface BearerChallenge {
  /** The protected resource's metadata document (RFC 9728 `resource_metadata`). */
  resourceMetadata?: string | undefined;
  /** The scopes to request: every scope the operation needs. */
  scopes?: readonly string[] | undefined;
  /** Why the token was refused; absent for a request that sent none. */
  error?: { code: "invalid_token" | "insufficient_scope"; description: string } | undefined;
}

/** A value safe inside an RFC 7235 quoted-string: printable ASCII without `"` and `\`. */
function quoted(value: string): string {
  return `"${value.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, "")}"`;
}

/** The header's value: `Bearer realm="writ", …`. */
export function bearerChallenge(challenge: BearerChallenge): string {
  const params = [`realm="writ"`];
  if (challenge.resourceMetadata !== undefined) {
    params.push(`resource_metadata=${quoted(challenge.resourceMetadata)}`);
  }
  if (challenge.scopes !== undefined) params.push(`scope=${quoted(challenge.scopes.join(" "))}`);
  if (challenge.error !== undefined) {
    params.push(
      `error="${challenge.error.code}"`,
      `error_description=${quoted(challenge.error.description)}`,
    );
  }
  return `Bearer ${params.join(", ")}`;
}
