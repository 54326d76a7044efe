/** Dispatch (DESIGN section 1, stage 8): sending an authorized call to its backend. */
export {
  CredentialResolver,
  type CredentialResolverOptions,
  type CredentialSource,
  type CredentialsConfig,
  type CredentialsConfigInput,
  credentialSourceSchema,
  credentialsConfigSchema,
} from "./credentials.ts";
export { type DispatchHttpOptions, type DispatchHttpResult, dispatchHttp } from "./http.ts";
