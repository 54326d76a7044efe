/**
 * zod schemas for the JOSE data Writ reads from outside: public JWKs and key sets (issuers'
 * JWKS, Writ's grant JWKS) and the claims of a grant. Shared by the identity verifier, the grant
 * signer and the executor so that all three read them the same way.
 */
import { z } from "zod";
import { conditionSchema, type GrantClaims } from "../core/types.ts";

const b64url = z.string().regex(/^[A-Za-z0-9_-]+$/, "must be base64url");

/**
 * A JWK as found in a key set: the members jose reads, unknown members dropped. Private members
 * are rejected, so a key set that leaks a private key is refused rather than used.
 */
export const publicJwkSchema = z
  .object({
    kty: z.string().min(1),
    kid: z.string().min(1).optional(),
    alg: z.string().min(1).optional(),
    use: z.string().optional(),
    key_ops: z.array(z.string()).optional(),
    crv: z.string().optional(),
    x: b64url.optional(),
    y: b64url.optional(),
    n: b64url.optional(),
    e: b64url.optional(),
    x5c: z.array(z.string()).optional(),
    x5t: z.string().optional(),
    "x5t#S256": z.string().optional(),
    d: z.undefined({ error: "a published key must not carry the private member d" }).optional(),
    k: z.undefined({ error: "a published key set must not carry symmetric (oct) keys" }).optional(),
  })
  .transform(({ d: _d, k: _k, ...jwk }) => jwk);
export type PublicJwk = z.output<typeof publicJwkSchema>;

export const jwksSchema = z.object({ keys: z.array(publicJwkSchema) });
export type Jwks = z.output<typeof jwksSchema>;

/** The condition types this version of Writ knows (the discriminants of `conditionSchema`). */
export const knownConditionTypes: ReadonlySet<string> = new Set(
  conditionSchema.options.map((option) => option.shape.type.value),
);

/** Claims of a grant JWT (DESIGN section 5). Unknown claims are dropped. */
export const grantClaimsSchema = z.object({
  iss: z.string().min(1),
  aud: z.string().min(1),
  sub: z.string().min(1),
  tnt: z.string().min(1),
  jti: z.string().min(1),
  iat: z.number().int(),
  nbf: z.number().int(),
  exp: z.number().int(),
  act: z.object({ name: z.string().min(1), version: z.string() }),
  // A call to a tool without a resource carries `{type: "none", id: ""}`.
  res: z
    .object({ type: z.string().min(1), id: z.string(), rev: z.string().optional() })
    .refine((res) => (res.type === "none") === (res.id === ""), {
      path: ["id"],
      message: 'must be empty exactly when type is "none" (a call without a resource)',
    }),
  args: z.string().regex(/^[0-9a-f]{64}$/, "must be a hex SHA-256 digest"),
  cnd: z.array(conditionSchema),
  dec: z.string(),
  pol: z.string(),
  max: z.number().int().positive(),
});

// The schema's output must stay assignable to the shared type.
const _claimsMatchCoreType = (claims: z.output<typeof grantClaimsSchema>): GrantClaims => claims;
void _claimsMatchCoreType;
