/**
 * Grant keys for an upstream test server started before the gateway whose grants it verifies:
 * the gateway's JWKS is known once it is up (`bind`); a grant checked before that is refused.
 */
import { createRemoteJWKSet } from "jose";
import type { GrantKeys } from "../../src/executor/index.ts";

export function lateGrantKeys(): { keys: GrantKeys; bind(jwksUrl: string): void } {
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  return {
    keys: (header, token) => {
      if (!jwks) throw new Error("the gateway is not up yet");
      return jwks(header, token);
    },
    bind: (jwksUrl) => {
      jwks = createRemoteJWKSet(new URL(jwksUrl));
    },
  };
}
