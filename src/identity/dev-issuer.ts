/**
 * The local development issuer, behind `writ token` and the default development config.
 *
 * !!! NOT FOR PRODUCTION. !!! Whoever can read its key file (or run `writ token` on the
 * machine) can mint a token for any subject, tenant and role. A production identity config must
 * list only the organisation's real identity provider(s) and must never trust the `writ-dev`
 * issuer or its keys.
 */
import { type CryptoKey, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT } from "jose";
import { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import { createSecretFile, readSecretFile } from "../grants/secret-file.ts";
import type { IssuerConfigInput } from "./config.ts";

export const DEV_ISSUER = "writ-dev";
export const DEV_AUDIENCE = "writ";

const b64url = z.string().regex(/^[A-Za-z0-9_-]+$/);
const devKeySchema = z
  .object({
    kty: z.literal("OKP"),
    crv: z.literal("Ed25519"),
    x: b64url,
    d: b64url,
    kid: z.string().min(1),
    alg: z.literal("EdDSA"),
  })
  .strict();
type DevKey = z.output<typeof devKeySchema>;

export interface DevIssuerOptions {
  /** Keep the key pair in this file (created 0600 when absent); omit for a throwaway in-memory key. */
  keyFile?: string;
  /** `iss` of minted tokens (default `writ-dev`). */
  issuer?: string;
  /** `aud` of minted tokens (default `writ`). */
  audience?: string;
}

export interface MintOptions {
  sub: string;
  tenant?: string;
  roles?: string[];
  scopes?: string[];
  /** Lifetime in seconds (default 3600, at most 86 400). */
  ttlSeconds?: number;
  /** Extra claims (cannot override the registered ones). */
  claims?: Record<string, unknown>;
}

/** Public key of the development issuer. */
export interface DevJwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  alg: "EdDSA";
  use: "sig";
}

export class DevIssuer {
  readonly issuer: string;
  readonly audience: string;
  readonly kid: string;
  readonly #privateKey: CryptoKey;
  readonly #publicJwk: DevJwk;

  private constructor(issuer: string, audience: string, key: DevKey, privateKey: CryptoKey) {
    this.issuer = issuer;
    this.audience = audience;
    this.kid = key.kid;
    this.#privateKey = privateKey;
    this.#publicJwk = { kty: key.kty, crv: key.crv, x: key.x, kid: key.kid, alg: key.alg, use: "sig" };
  }

  /** Loads the key pair from `keyFile`, generating (and saving) it on first use. */
  static async create(options: DevIssuerOptions = {}): Promise<DevIssuer> {
    const issuer = options.issuer ?? DEV_ISSUER;
    const audience = options.audience ?? DEV_AUDIENCE;
    let key: DevKey;
    if (options.keyFile === undefined) {
      key = await generateDevKey();
    } else {
      const existing = await readDevKey(options.keyFile);
      if (existing !== undefined) {
        key = existing;
      } else {
        const generated = await generateDevKey();
        const created = await createSecretFile(options.keyFile, `${JSON.stringify(generated, null, 2)}\n`);
        const loaded = created ? generated : await readDevKey(options.keyFile);
        if (loaded === undefined) {
          throw new WritError(
            "internal",
            `development key file ${options.keyFile} vanished while it was created`,
            {
              suggestedFix: "retry; check that nothing else deletes files in that directory",
            },
          );
        }
        key = loaded;
      }
    }
    const { kid: _kid, alg, ...jwk } = key;
    const privateKey = await importJWK(jwk, alg);
    return new DevIssuer(issuer, audience, key, privateKey);
  }

  /** The public key set, for the development identity config or a `/.well-known` endpoint. */
  jwks(): { keys: DevJwk[] } {
    return { keys: [{ ...this.#publicJwk }] };
  }

  /** An identity-config issuer entry that trusts this development issuer (development only!). */
  issuerConfig(): IssuerConfigInput {
    return { issuer: this.issuer, audience: this.audience, algorithms: ["EdDSA"], jwks: this.jwks() };
  }

  /** A bearer JWT for `sub`, signed with the development key. */
  async mint(options: MintOptions): Promise<string> {
    const ttl = options.ttlSeconds ?? 3600;
    if (!Number.isInteger(ttl) || ttl <= 0 || ttl > 86_400) {
      throw new WritError(
        "invalid_argument",
        `ttlSeconds must be an integer between 1 and 86400, got ${ttl}`,
        {
          suggestedFix: "pick a lifetime of at most one day",
          fieldErrors: [{ path: "/ttlSeconds", message: "must be an integer between 1 and 86400" }],
        },
      );
    }
    if (options.sub === "") {
      throw new WritError("invalid_argument", "sub must not be empty", {
        suggestedFix: "pass the subject id the token is for",
        fieldErrors: [{ path: "/sub", message: "must not be empty" }],
      });
    }
    return new SignJWT({
      ...options.claims,
      tnt: options.tenant ?? "default",
      roles: options.roles ?? [],
      scope: (options.scopes ?? []).join(" "),
    })
      .setProtectedHeader({ alg: "EdDSA", kid: this.kid, typ: "JWT" })
      .setIssuer(this.issuer)
      .setAudience(this.audience)
      .setSubject(options.sub)
      .setIssuedAt()
      .setExpirationTime(`${ttl}s`)
      .setJti(crypto.randomUUID())
      .sign(this.#privateKey);
  }
}

async function generateDevKey(): Promise<DevKey> {
  const { privateKey } = await generateKeyPair("EdDSA", { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x });
  return devKeySchema.parse({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, d: jwk.d, kid, alg: "EdDSA" });
}

async function readDevKey(file: string): Promise<DevKey | undefined> {
  const read = await readSecretFile(file);
  if (read === undefined) return undefined;
  const fix = `delete ${file} to generate a new development key (tokens minted with the old one stop verifying)`;
  let json: unknown;
  try {
    json = JSON.parse(read.text);
  } catch (error) {
    throw new WritError("internal", `development key file ${file} is not valid JSON`, {
      suggestedFix: fix,
      cause: error,
    });
  }
  const parsed = devKeySchema.safeParse(json);
  if (!parsed.success) {
    throw new WritError("internal", `development key file ${file} is not a Writ development key`, {
      suggestedFix: fix,
      fieldErrors: fieldErrorsFromZod(parsed.error),
    });
  }
  return parsed.data;
}
