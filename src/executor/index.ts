/**
 * `writ/executor`: what a tool backend needs to accept Writ's grants. Verify a grant against the
 * request actually received (`verifyGrant`), enforce single use (`ReplayGuard`,
 * `MemoryReplayCache`), put `requireGrant` in front of a hono route, or wrap an MCP tool handler
 * with `grantRequired`.
 */
export type { GrantClaims } from "../core/types.ts";
export { GrantError, type GrantErrorCode, grantErrorCodes } from "./errors.ts";
export {
  type GrantRefusal,
  type GrantRequiredOptions,
  grantRequired,
  MCP_GRANT_META_KEY,
  type McpToolExtra,
} from "./mcp.ts";
export { type GrantEnv, type RequireGrantOptions, requireGrant } from "./middleware.ts";
export { MemoryReplayCache, type MemoryReplayCacheOptions, type ReplayGuard } from "./replay.ts";
export {
  boundRevision,
  GRANT_ALGORITHMS,
  type GrantKeys,
  type VerifyGrantOptions,
  verifyGrant,
} from "./verify.ts";
