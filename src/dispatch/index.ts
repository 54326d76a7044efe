/**
 * Dispatch (DESIGN section 1, stage 9): sending an authorized call to its backend, one `Backend`
 * per backend kind (registry.ts). The MCP client (mcp/upstream.ts) is not exported here: it loads
 * the MCP client SDK, which server.ts imports only when `mcp.servers` names an upstream.
 */

export type { Backend, BackendCall, BackendDeps, BackendKind, BackendRun } from "./backend.ts";
export {
  type BackendCredentials,
  CredentialResolver,
  type CredentialResolverOptions,
  type CredentialSource,
  type CredentialsConfig,
  type CredentialsConfigInput,
  credentialSourceSchema,
  credentialsConfigSchema,
} from "./credentials.ts";
export { type DispatchHttpOptions, type DispatchHttpResult, dispatchHttp } from "./http.ts";
export { prepareBackend } from "./registry.ts";
