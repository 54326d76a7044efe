/**
 * Grants (DESIGN section 5): short-lived, single-use, signed tokens scoped to one call. Writ signs
 * them here; tool backends verify them with `writ/executor`.
 */
export {
  type GrantAlgorithm,
  type GrantIssuer,
  type GrantJwk,
  type GrantRequest,
  GrantSigner,
  type GrantSignerOptions,
  type GrantsConfig,
  type GrantsConfigInput,
  grantsConfigSchema,
  type IssuedGrant,
} from "./signer.ts";
