/**
 * Identity (pipeline stage 3): verify the caller's bearer JWT and map it to a `Subject`.
 * `DevIssuer` mints tokens for local development only; production configs must not trust it.
 */
export type { TokenCacheStats } from "./cache.ts";
export { type BearerChallenge, bearerChallenge } from "./challenge.ts";
export {
  type IdentityConfig,
  type IdentityConfigInput,
  type IssuerConfig,
  type IssuerConfigInput,
  identityConfigSchema,
  issuerConfigSchema,
  parseIdentityConfig,
} from "./config.ts";
export {
  DEV_AUDIENCE,
  DEV_ISSUER,
  DevIssuer,
  type DevIssuerOptions,
  type DevJwk,
  type MintOptions,
} from "./dev-issuer.ts";
export { hasAnyRole } from "./roles.ts";
export { type TrustSettings, trustedIssuers } from "./trusted.ts";
export {
  type Authenticator,
  IdentityVerifier,
  type IdentityVerifierOptions,
  type ProtectedResource,
  type VerifyOptions,
} from "./verifier.ts";
