/**
 * Where an issuer's verification keys come from, and how the verified-token cache learns that
 * they changed.
 *
 * Every source exposes a key-set *version*: an opaque value that changes whenever the key set
 * may have changed (for a remote JWKS, every successful fetch; inline keys and secrets never
 * change). A cached verification remembers the version it was checked against and the identity
 * of the key that verified it (`kid` + RFC 7638 thumbprint). When the version moves, the entry is
 * re-checked once against the new key set (its thumbprints are computed once per version), and
 * dropped if that key is gone or its material changed.
 */
import { createHash } from "node:crypto";
import {
  type CryptoKey,
  calculateJwkThumbprint,
  createLocalJWKSet,
  createRemoteJWKSet,
  type JWKSCacheInput,
  type JWTVerifyGetKey,
  jwksCache,
  type RemoteJWKSet,
} from "jose";
import { jwksSchema } from "../executor/schemas.ts";
import type { IssuerConfig } from "./config.ts";

/** The key that verified a token. */
export interface KeyIdentity {
  kid: string | undefined;
  thumbprint: string;
}

export interface KeySource {
  /** What `jwtVerify` is given. */
  readonly key: JWTVerifyGetKey | Uint8Array;
  /** Where the keys come from, for error messages. */
  readonly description: string;
  readonly remote: boolean;
  /** The current key-set version, or `undefined` when the cached keys are too old to trust without a refetch. */
  freshVersion(): unknown;
  /** Refetches the key set if needed and returns its version (throws when it cannot be fetched). */
  refresh(): Promise<unknown>;
  /** The identity of the key that verified a token with header `kid`. */
  identify(verifiedWith: CryptoKey | Uint8Array | undefined, kid: string | undefined): Promise<KeyIdentity>;
  /** Whether the key set of `version` still holds the key. */
  holds(key: KeyIdentity, version: unknown): Promise<boolean>;
}

const thumbprints = new WeakMap<CryptoKey, string>();

async function thumbprintOf(key: CryptoKey): Promise<string> {
  let thumbprint = thumbprints.get(key);
  if (thumbprint === undefined) {
    thumbprint = await calculateJwkThumbprint(key);
    thumbprints.set(key, thumbprint);
  }
  return thumbprint;
}

async function identifyAsymmetric(verifiedWith: CryptoKey | Uint8Array | undefined, kid: string | undefined) {
  if (verifiedWith === undefined || verifiedWith instanceof Uint8Array) {
    throw new Error("a JWKS issuer verified a token without a public key");
  }
  return { kid, thumbprint: await thumbprintOf(verifiedWith) };
}

/** Keys fetched from `jwks_uri` with jose's remote JWKS (cache, cooldown, refetch on unknown `kid`). */
class RemoteKeySource implements KeySource {
  readonly key: RemoteJWKSet;
  readonly description: string;
  readonly remote = true;
  /** jose writes every successfully fetched key set here (`jwks`, `uat`): its identity is the version. */
  readonly #fetched: JWKSCacheInput = {};
  #indexed: { version: unknown; keys: Promise<Set<string>> } | undefined;

  constructor(config: IssuerConfig & { jwks_uri: string }) {
    this.description = `the JWKS at ${config.jwks_uri}`;
    this.key = createRemoteJWKSet(new URL(config.jwks_uri), {
      cacheMaxAge: config.jwks_cache_max_age_s * 1000,
      cooldownDuration: config.jwks_cooldown_s * 1000,
      timeoutDuration: config.jwks_timeout_ms,
      [jwksCache]: this.#fetched,
    });
  }

  freshVersion(): unknown {
    return this.key.fresh ? Reflect.get(this.#fetched, "jwks") : undefined;
  }

  async refresh(): Promise<unknown> {
    if (!this.key.fresh) await this.key.reload();
    return Reflect.get(this.#fetched, "jwks");
  }

  identify(verifiedWith: CryptoKey | Uint8Array | undefined, kid: string | undefined): Promise<KeyIdentity> {
    return identifyAsymmetric(verifiedWith, kid);
  }

  async holds(key: KeyIdentity, version: unknown): Promise<boolean> {
    let indexed = this.#indexed;
    if (indexed === undefined || indexed.version !== version) {
      indexed = { version, keys: indexKeySet(version) };
      this.#indexed = indexed;
    }
    const keys = await indexed.keys;
    return (
      keys.has(`${key.kid ?? ""}\u0000${key.thumbprint}`) ||
      (key.kid === undefined && keys.has(key.thumbprint))
    );
  }
}

/** `kid\0thumbprint` for every key, plus the bare thumbprints (tokens without `kid`). */
async function indexKeySet(jwks: unknown): Promise<Set<string>> {
  const index = new Set<string>();
  const parsed = jwksSchema.safeParse(jwks);
  if (!parsed.success) return index;
  for (const jwk of parsed.data.keys) {
    try {
      const thumbprint = await calculateJwkThumbprint(jwk);
      index.add(`${jwk.kid ?? ""}\u0000${thumbprint}`);
      index.add(thumbprint);
    } catch {
      // A key jose cannot fingerprint cannot have verified anything.
    }
  }
  return index;
}

/** Inline keys from the config: fixed for the verifier's lifetime. */
class LocalKeySource implements KeySource {
  readonly key: JWTVerifyGetKey;
  readonly description = "the configured jwks";
  readonly remote = false;

  constructor(jwks: NonNullable<IssuerConfig["jwks"]>) {
    this.key = createLocalJWKSet(jwks);
  }

  freshVersion(): unknown {
    return 0;
  }

  async refresh(): Promise<unknown> {
    return 0;
  }

  identify(verifiedWith: CryptoKey | Uint8Array | undefined, kid: string | undefined): Promise<KeyIdentity> {
    return identifyAsymmetric(verifiedWith, kid);
  }

  async holds(): Promise<boolean> {
    return true;
  }
}

/** An HMAC secret read from the environment once, at startup. */
class SecretKeySource implements KeySource {
  readonly key: Uint8Array;
  readonly description: string;
  readonly remote = false;
  readonly #identity: KeyIdentity;

  constructor(variable: string, secret: Uint8Array) {
    this.key = secret;
    this.description = `the secret in $${variable}`;
    this.#identity = { kid: undefined, thumbprint: createHash("sha256").update(secret).digest("base64url") };
  }

  freshVersion(): unknown {
    return 0;
  }

  async refresh(): Promise<unknown> {
    return 0;
  }

  async identify(): Promise<KeyIdentity> {
    return this.#identity;
  }

  async holds(): Promise<boolean> {
    return true;
  }
}

export class KeySourceError extends Error {}

export function keySourceFor(
  config: IssuerConfig,
  env: Readonly<Record<string, string | undefined>>,
): KeySource {
  if (config.jwks_uri !== undefined) return new RemoteKeySource({ ...config, jwks_uri: config.jwks_uri });
  if (config.jwks !== undefined) return new LocalKeySource(config.jwks);
  if (config.secret_env !== undefined) {
    const value = env[config.secret_env];
    const secret = new TextEncoder().encode(value ?? "");
    if (secret.byteLength < 32) {
      throw new KeySourceError(
        `issuer ${config.issuer}: environment variable ${config.secret_env} must hold an HMAC secret of at least 32 bytes (${value === undefined ? "it is not set" : `it has ${secret.byteLength}`})`,
      );
    }
    return new SecretKeySource(config.secret_env, secret);
  }
  throw new KeySourceError(`issuer ${config.issuer}: no key source (jwks_uri, jwks or secret_env)`);
}
