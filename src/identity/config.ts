/**
 * Identity configuration: which issuers' bearer JWTs Writ accepts and how their claims map to a
 * subject. Dangerous settings are refused here, at load time: `alg: none`, unknown algorithms, and
 * HMAC algorithms unless the issuer is explicitly an HMAC issuer with a secret (an HS* entry next
 * to public keys is the classic key-confusion forgery).
 */
import { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import { jwksSchema } from "../executor/schemas.ts";

export const asymmetricAlgorithms = [
  "EdDSA",
  "Ed25519",
  "ES256",
  "ES384",
  "ES512",
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
] as const;
export const hmacAlgorithms = ["HS256", "HS384", "HS512"] as const;

const asymmetric: ReadonlySet<string> = new Set(asymmetricAlgorithms);
const hmac: ReadonlySet<string> = new Set(hmacAlgorithms);

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"]);

const claimName = z.string().min(1);

export const issuerConfigSchema = z
  .object({
    /** The `iss` value tokens from this issuer carry; tokens are routed to an issuer by it. */
    issuer: z.string().min(1),
    /** Accepted `aud` value(s): the token must name at least one. */
    audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
    /** Allow-list of JWS algorithms. */
    algorithms: z.array(z.string()).min(1).default(["EdDSA", "ES256", "RS256"]),
    /** Allowed clock skew for `exp` and `nbf`, in seconds. */
    clock_tolerance_s: z.number().int().min(0).max(300).default(30),
    /** The issuer's JWKS URL (https, or http on a loopback host). */
    jwks_uri: z.url({ protocol: /^https?$/ }).optional(),
    /** The issuer's public keys, inline. */
    jwks: jwksSchema.optional(),
    /** For HS256/384/512 only: the environment variable holding the shared secret (≥ 32 bytes). */
    secret_env: z.string().min(1).optional(),
    /** Remote JWKS: keys are refetched after this age (seconds). */
    jwks_cache_max_age_s: z.number().positive().default(600),
    /** Remote JWKS: a token with an unknown `kid` triggers a refetch only this long after the last one (seconds). */
    jwks_cooldown_s: z.number().min(0).default(30),
    /** Remote JWKS: HTTP timeout (milliseconds). */
    jwks_timeout_ms: z.number().int().positive().default(5000),
    /** Claim names mapped to the subject. */
    claims: z
      .object({
        subject: claimName.default("sub"),
        tenant: claimName.default("tnt"),
        roles: claimName.default("roles"),
        /** A space-separated string (OAuth `scope`) or an array. */
        scopes: claimName.default("scope"),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .superRefine((config, context) => {
    const sources = [config.jwks_uri, config.jwks, config.secret_env].filter(
      (source) => source !== undefined,
    );
    if (sources.length !== 1) {
      context.addIssue({
        code: "custom",
        path: ["jwks_uri"],
        message: "set exactly one of jwks_uri (remote JWKS), jwks (inline keys) or secret_env (HMAC secret)",
      });
    }
    config.algorithms.forEach((alg, index) => {
      const path = ["algorithms", index];
      if (alg.toLowerCase() === "none") {
        context.addIssue({ code: "custom", path, message: "alg none (unsigned tokens) is never allowed" });
      } else if (hmac.has(alg)) {
        if (config.secret_env === undefined) {
          context.addIssue({
            code: "custom",
            path,
            message: `${alg} is allowed only for an HMAC issuer configured with secret_env; next to public keys it lets anyone forge tokens`,
          });
        }
      } else if (!asymmetric.has(alg)) {
        context.addIssue({
          code: "custom",
          path,
          message: `unknown algorithm ${JSON.stringify(alg)}; use one of ${[...asymmetricAlgorithms, ...hmacAlgorithms].join(", ")}`,
        });
      } else if (config.secret_env !== undefined) {
        context.addIssue({
          code: "custom",
          path,
          message: `${alg} needs public keys; an issuer with secret_env may list only HS256, HS384 or HS512`,
        });
      }
    });
    if (config.jwks_uri !== undefined) {
      const url = new URL(config.jwks_uri);
      if (url.protocol !== "https:" && !loopbackHosts.has(url.hostname)) {
        context.addIssue({
          code: "custom",
          path: ["jwks_uri"],
          message: "jwks_uri must use https (plain http is accepted only on localhost)",
        });
      }
    }
  });

export const identityConfigSchema = z
  .object({
    issuers: z
      .array(issuerConfigSchema)
      .min(1)
      .refine((issuers) => new Set(issuers.map((issuer) => issuer.issuer)).size === issuers.length, {
        message: "each issuer may be configured once",
      }),
    /** Verified-token cache; `max_entries: 0` turns it off. */
    token_cache: z
      .object({ max_entries: z.number().int().min(0).default(10_000) })
      .strict()
      .prefault({}),
  })
  .strict();

export type IssuerConfig = z.output<typeof issuerConfigSchema>;
export type IssuerConfigInput = z.input<typeof issuerConfigSchema>;
export type IdentityConfig = z.output<typeof identityConfigSchema>;
export type IdentityConfigInput = z.input<typeof identityConfigSchema>;

/** Validates an identity configuration, throwing an `invalid_argument` WritError listing every problem. */
export function parseIdentityConfig(input: unknown): IdentityConfig {
  const parsed = identityConfigSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new WritError("invalid_argument", "the identity configuration is invalid", {
    suggestedFix: "fix the fields listed in field_errors under identity in the gateway config",
    fieldErrors: fieldErrorsFromZod(parsed.error, "/identity"),
  });
}
