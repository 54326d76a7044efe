/**
 * Pipeline stage 3: the caller's bearer JWT → a verified `Subject` (DESIGN section 1). The issuer
 * is picked by the token's `iss`; jose's `jwtVerify` checks signature, algorithm allow-list,
 * issuer, audience, `exp`/`nbf` with clock tolerance. Successful verifications are cached (see
 * cache.ts). Every failure is an `unauthenticated` WritError that says what was wrong and never
 * contains the token.
 */
import { type CryptoKey, decodeJwt, decodeProtectedHeader, errors, jwtVerify } from "jose";
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import type { Subject } from "../core/types.ts";
import { type TokenCacheStats, tokenCacheKey, VerifiedTokenCache } from "./cache.ts";
import { ClaimsError, subjectFromClaims } from "./claims.ts";
import {
  type IdentityConfig,
  type IdentityConfigInput,
  type IssuerConfig,
  parseIdentityConfig,
} from "./config.ts";
import { type KeySource, KeySourceError, keySourceFor } from "./keys.ts";

/**
 * A resource Writ serves to bearer tokens, as RFC 9728 describes it: its canonical URI, which a
 * token presented there must carry in `aud` (RFC 8707; the MCP authorization spec's "token audience
 * binding"), and the scopes a client should ask for.
 */
export interface ProtectedResource {
  resource?: string;
  scopes?: readonly string[];
}

export interface VerifyOptions {
  /** The token must name this resource in `aud`, besides its issuer's configured audience. */
  resource?: string | undefined;
}

export interface IdentityVerifierOptions {
  /** Writ's MCP endpoint as a protected resource (`mcp.resource`, `mcp.scopes_supported`). */
  protectedResource?: ProtectedResource;
  /** Where `secret_env` variables are read (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Milliseconds since the epoch; defaults to `Date.now`. */
  clock?: () => number;
}

interface Issuer {
  config: IssuerConfig;
  source: KeySource;
  allowed: ReadonlySet<string>;
}

const headerSchema = z.object({ alg: z.string(), kid: z.string().optional() });
const issSchema = z.object({ iss: z.string().min(1) });
const compactJws = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

const NEW_TOKEN = "get a new token from your identity provider and retry";

function unauthenticated(
  message: string,
  suggestedFix: string,
  options: { retryable?: boolean; cause?: unknown } = {},
) {
  return new WritError("unauthenticated", message, { suggestedFix, ...options });
}

/** A claim value safe to quote in a message: a string, cut short. */
function quote(value: unknown): string {
  const text = typeof value === "string" ? value : String(value);
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

function isoOf(seconds: unknown): string {
  return typeof seconds === "number" && Number.isFinite(seconds)
    ? new Date(seconds * 1000).toISOString()
    : "an unknown time";
}

/** How the gateway's entrances know their callers (`Gateway.identity`). */
export interface Authenticator {
  /** The MCP endpoint's canonical resource and scopes, when configured. */
  readonly protectedResource: ProtectedResource | undefined;
  /** The issuers whose tokens are accepted (`iss`), in configuration order. */
  readonly issuers: string[];
  /** The subject of `Authorization: Bearer <jwt>` (with `resource`: a token naming it in `aud`). */
  verify(authorizationHeader: string | undefined, options?: VerifyOptions): Promise<Subject>;
  cacheStats(): TokenCacheStats;
}

export class IdentityVerifier implements Authenticator {
  readonly #issuers = new Map<string, Issuer>();
  readonly #cache: VerifiedTokenCache;
  readonly #clock: () => number;
  /** The MCP endpoint's canonical resource and scopes, when configured. */
  readonly protectedResource: ProtectedResource | undefined;

  /** Validates the configuration (throws an `invalid_argument` WritError on any problem). */
  constructor(config: IdentityConfigInput | IdentityConfig, options: IdentityVerifierOptions = {}) {
    const parsed = parseIdentityConfig(config);
    const env = options.env ?? process.env;
    for (const issuer of parsed.issuers) {
      let source: KeySource;
      try {
        source = keySourceFor(issuer, env);
      } catch (error) {
        if (!(error instanceof KeySourceError)) throw error;
        throw new WritError("invalid_argument", error.message, {
          suggestedFix: `set ${issuer.secret_env ?? "the variable"} to a random secret of at least 32 bytes before starting Writ`,
        });
      }
      this.#issuers.set(issuer.issuer, { config: issuer, source, allowed: new Set(issuer.algorithms) });
    }
    this.#cache = new VerifiedTokenCache(parsed.token_cache.max_entries);
    this.#clock = options.clock ?? Date.now;
    this.protectedResource = options.protectedResource;
  }

  /** The issuers whose tokens are accepted (`iss`), in configuration order. */
  get issuers(): string[] {
    return [...this.#issuers.keys()];
  }

  /**
   * Verifies `Authorization: Bearer <jwt>` and maps the token's claims to a subject; with
   * `resource`, the token must also name that resource in `aud`.
   */
  async verify(authorizationHeader: string | undefined, options: VerifyOptions = {}): Promise<Subject> {
    const subject = await this.#verify(authorizationHeader);
    if (options.resource !== undefined) requireAudience(subject, options.resource);
    return subject;
  }

  async #verify(authorizationHeader: string | undefined): Promise<Subject> {
    const token = bearerToken(authorizationHeader);
    const nowMs = this.#clock();
    const cacheKey = tokenCacheKey(token);
    const cached = await this.#cache.lookup(cacheKey, nowMs / 1000);
    if (cached !== undefined) return cached;

    const { kid, issuer } = this.#route(token);
    const config = issuer.config;
    const version = issuer.source.freshVersion();
    const options = {
      issuer: config.issuer,
      audience: config.audience,
      algorithms: config.algorithms,
      clockTolerance: config.clock_tolerance_s,
      currentDate: new Date(nowMs),
      requiredClaims: ["exp"],
    };
    let payload: Record<string, unknown>;
    let verifiedWith: CryptoKey | Uint8Array | undefined;
    try {
      const key = issuer.source.key;
      if (typeof key === "function") {
        const result = await jwtVerify(token, key, options);
        payload = result.payload;
        verifiedWith = result.key;
      } else {
        payload = (await jwtVerify(token, key, options)).payload;
        verifiedWith = key;
      }
    } catch (error) {
      throw fromJoseError(error, issuer, kid);
    }

    let subject: Subject;
    try {
      subject = subjectFromClaims(payload, config);
    } catch (error) {
      if (!(error instanceof ClaimsError)) throw error;
      throw unauthenticated(
        error.message,
        `ask the issuer ${quote(config.issuer)} for a token carrying it, or map the right claim under claims in the identity config`,
      );
    }
    const exp = typeof payload.exp === "number" ? payload.exp : Number.NEGATIVE_INFINITY;
    const nbf = typeof payload.nbf === "number" ? payload.nbf : Number.NEGATIVE_INFINITY;
    this.#cache.store(cacheKey, {
      subject,
      notBefore: nbf - config.clock_tolerance_s,
      expiresAt: exp,
      source: issuer.source,
      key: await issuer.source.identify(verifiedWith, kid),
      version,
    });
    return subject;
  }

  /** Hit/miss counters of the verified-token cache. */
  cacheStats(): TokenCacheStats {
    return this.#cache.stats();
  }

  /** Forgets every cached verification. */
  clearCache(): void {
    this.#cache.clear();
  }

  /** Reads (without trusting) the header and `iss`, and picks the issuer. */
  #route(token: string): { kid: string | undefined; issuer: Issuer } {
    const malformed = (cause?: unknown) =>
      unauthenticated(
        "the bearer token is not a well-formed signed JWT (three base64url segments with a JSON header and claims)",
        `send the token exactly as the identity provider issued it; ${NEW_TOKEN}`,
        { cause },
      );
    if (token.split(".").length === 5) {
      throw unauthenticated(
        "the bearer token is an encrypted JWT (JWE), which Writ does not accept",
        "send a signed (JWS) access token",
      );
    }
    if (!compactJws.test(token)) throw malformed();
    let header: z.output<typeof headerSchema>;
    let claims: z.ZodSafeParseResult<z.output<typeof issSchema>>;
    try {
      const parsedHeader = headerSchema.safeParse(decodeProtectedHeader(token));
      if (!parsedHeader.success) throw malformed();
      header = parsedHeader.data;
      claims = issSchema.safeParse(decodeJwt(token));
    } catch (error) {
      if (error instanceof WritError) throw error;
      throw malformed(error);
    }
    if (header.alg.toLowerCase() === "none") {
      throw unauthenticated(
        "the bearer token is unsigned (alg: none); Writ never accepts unsigned tokens",
        NEW_TOKEN,
      );
    }
    if (!claims.success) {
      throw unauthenticated(
        "the bearer token has no iss claim, so no configured issuer can verify it",
        NEW_TOKEN,
      );
    }
    const issuer = this.#issuers.get(claims.data.iss);
    if (issuer === undefined) {
      throw unauthenticated(
        `the token's issuer ${quote(claims.data.iss)} is not configured`,
        "use a token from a configured issuer, or add this issuer under identity.issuers in the gateway config",
      );
    }
    if (!issuer.allowed.has(header.alg)) {
      throw unauthenticated(
        `the token's algorithm ${quote(header.alg)} is not allowed for issuer ${quote(issuer.config.issuer)} (allowed: ${issuer.config.algorithms.join(", ")})`,
        `${NEW_TOKEN}; if the issuer really signs with this algorithm, add it to the issuer's algorithms`,
      );
    }
    return { kid: header.kid, issuer };
  }
}

/** RFC 8707: a token used at `resource` must have been issued for it (`aud` names it). */
function requireAudience(subject: Subject, resource: string): void {
  const aud = subject.claims.aud;
  const audiences = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : [];
  if (audiences.includes(resource)) return;
  throw unauthenticated(
    `the token was not issued for ${quote(resource)}: its audience (aud) does not name this resource`,
    `get a token for this resource: send resource=${resource} in the authorization and token requests (RFC 8707)`,
  );
}

function bearerToken(header: string | undefined): string {
  if (header === undefined || header.trim() === "") {
    throw unauthenticated(
      "the request has no Authorization header",
      "send `Authorization: Bearer <JWT from your identity provider>` (for local development, mint one with `writ token`)",
    );
  }
  const match = /^\s*(\S+)(?:\s+(\S+))?\s*$/.exec(header);
  const scheme = match?.[1];
  if (scheme === undefined || scheme.toLowerCase() !== "bearer") {
    const shown =
      scheme !== undefined && /^[A-Za-z][A-Za-z0-9-]{0,19}$/.test(scheme) ? ` (scheme ${scheme})` : "";
    throw unauthenticated(
      `the Authorization header is not a Bearer token${shown}`,
      "send `Authorization: Bearer <JWT>`",
    );
  }
  const token = match?.[2];
  if (token === undefined) {
    throw unauthenticated(
      "the Authorization header says Bearer but carries no token",
      "send `Authorization: Bearer <JWT>`",
    );
  }
  return token;
}

function fromJoseError(error: unknown, issuer: Issuer, kid: string | undefined): WritError {
  const name = quote(issuer.config.issuer);
  const cause = { cause: error };
  if (error instanceof errors.JWTExpired) {
    return unauthenticated(`the token expired at ${isoOf(error.payload.exp)}`, NEW_TOKEN, cause);
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case "nbf":
        return unauthenticated(
          `the token is not valid yet (nbf ${isoOf(error.payload.nbf)})`,
          "wait until it becomes valid, and check that the clocks of the issuer and Writ are synchronized",
          cause,
        );
      case "aud":
        return unauthenticated(
          `the token's audience does not include ${[issuer.config.audience].flat().map(quote).join(" or ")}`,
          "ask the identity provider for a token issued for Writ's audience",
          cause,
        );
      case "iss":
        return unauthenticated(`the token was not issued by ${name}`, NEW_TOKEN, cause);
      case "exp":
        return unauthenticated(
          error.reason === "missing"
            ? "the token has no exp claim; Writ only accepts expiring tokens"
            : "the token's exp claim is invalid",
          "ask the identity provider for an access token with an expiry",
          cause,
        );
      default:
        return unauthenticated(
          `the token's ${quote(error.claim)} claim is ${error.reason === "missing" ? "missing" : "invalid"}`,
          NEW_TOKEN,
          cause,
        );
    }
  }
  const critical = /^Extension Header Parameter "(.*)" is not recognized$/.exec(
    error instanceof errors.JOSENotSupported ? error.message : "",
  );
  if (critical !== null) {
    return unauthenticated(
      `the token's header marks the extension ${quote(critical[1] ?? "")} as critical ("crit"), which Writ does not understand, so it may not accept the token (RFC 7515, section 4.1.11)`,
      "ask the identity provider for a token without critical header extensions",
      cause,
    );
  }
  if (error instanceof errors.JWSInvalid && error.message.includes('"crit"')) {
    return unauthenticated(`the token's "crit" header is malformed: ${error.message}`, NEW_TOKEN, cause);
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return unauthenticated(
      `the token's algorithm is not allowed or does not fit the keys of issuer ${name} (allowed: ${issuer.config.algorithms.join(", ")})`,
      NEW_TOKEN,
      cause,
    );
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return unauthenticated(
      `the token's signature does not verify with ${issuer.source.description}: it was altered or signed by another key`,
      NEW_TOKEN,
      cause,
    );
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return unauthenticated(
      `no key in ${issuer.source.description} matches the token (kid ${kid === undefined ? "absent" : quote(kid)})`,
      `the signing key may have been rotated out: ${NEW_TOKEN}`,
      cause,
    );
  }
  if (error instanceof errors.JWKSMultipleMatchingKeys) {
    return unauthenticated(
      `several keys in ${issuer.source.description} match the token, which has no kid`,
      "the issuer must put a kid in its tokens' header",
      cause,
    );
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
    return unauthenticated(`the bearer token is not a valid JWT (${error.message})`, NEW_TOKEN, cause);
  }
  if (issuer.source.remote) {
    const detail = error instanceof Error ? error.message : String(error);
    return unauthenticated(
      `the keys of issuer ${name} could not be fetched from ${issuer.source.description} (${detail})`,
      "retry shortly; if it persists, check that Writ can reach jwks_uri",
      { ...cause, retryable: true },
    );
  }
  return new WritError("internal", `verifying a token of issuer ${name} failed unexpectedly`, {
    suggestedFix: "retry; if it persists, report it with the decision id",
    cause: error,
  });
}
