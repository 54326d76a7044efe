/**
 * The keys that verify grants, as jose key getters: a JWKS object, or the URL of Writ's
 * `/.well-known/jwks.json`, each built once and reused by every verification.
 */
import { createLocalJWKSet, createRemoteJWKSet, type JWTVerifyGetKey, type RemoteJWKSet } from "jose";
import { GrantError } from "./errors.ts";
import { jwksSchema } from "./schemas.ts";

/**
 * Where the verifying keys come from: a JWKS object (`{keys: [...]}`), the URL of Writ's
 * `/.well-known/jwks.json` (fetched and cached, refetched when a grant names an unknown `kid`),
 * or a jose key getter.
 */
export type GrantKeys = { keys: unknown[] } | string | URL | JWTVerifyGetKey;

const remoteSets = new Map<string, RemoteJWKSet>();
/**
 * Key sets by the object given and by content: a jose key set imports each key once, so a caller
 * giving a new object per call (with the same keys) gets the one built for the first.
 */
const localSets = new WeakMap<object, JWTVerifyGetKey>();
const localSetsByContent = new Map<string, JWTVerifyGetKey>();

export function keyGetter(keys: GrantKeys): JWTVerifyGetKey {
  if (typeof keys === "function") return keys;
  if (typeof keys === "string" || keys instanceof URL) {
    let url: URL;
    try {
      url = new URL(keys);
    } catch (error) {
      throw new GrantError("unavailable", `keys is not a valid URL`, `configure the URL of Writ's JWKS`, {
        cause: error,
      });
    }
    let remote = remoteSets.get(url.href);
    if (remote === undefined) {
      if (remoteSets.size >= 64) remoteSets.clear();
      remote = createRemoteJWKSet(url);
      remoteSets.set(url.href, remote);
    }
    return remote;
  }
  let local = localSets.get(keys);
  if (local !== undefined) return local;
  const content = JSON.stringify(keys);
  local = localSetsByContent.get(content);
  if (local === undefined) {
    const parsed = jwksSchema.safeParse(keys);
    if (!parsed.success) {
      throw new GrantError(
        "unavailable",
        `the keys option is not a valid public JWKS (${parsed.error.issues[0]?.message ?? "invalid"})`,
        `configure Writ's /.well-known/jwks.json`,
      );
    }
    local = createLocalJWKSet(parsed.data);
    if (localSetsByContent.size >= 64) localSetsByContent.clear();
    localSetsByContent.set(content, local);
  }
  localSets.set(keys, local);
  return local;
}
