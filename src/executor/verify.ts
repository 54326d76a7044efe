/**
 * `verifyGrant`: what a tool backend runs before it does anything (DESIGN section 5). Checks, in
 * order: the grant is present and well formed, its algorithm (EdDSA or ES256 only), its `typ`, its
 * signature against Writ's key set, issuer, audience (this executor), time, claims shape and
 * condition vocabulary, action, resource, the resource's revision (when the backend can read it),
 * the digest of the arguments actually received, the conditions checkable from those arguments,
 * and finally single use. A grant is consumed only when every other check passed.
 */

import { decodeProtectedHeader, errors, jwtVerify } from "jose";
import { z } from "zod";
import { canonicalJson, jsonDigest } from "../core/digest.ts";
import { errorMessage } from "../core/errors.ts";
import { atPointer } from "../core/json-pointer.ts";
import { type Condition, GRANT_TYPE, type GrantClaims } from "../core/types.ts";
import { GrantError } from "./errors.ts";
import { type GrantKeys, keyGetter } from "./keys.ts";
import { MemoryReplayCache, type ReplayGuard } from "./replay.ts";
import { grantClaimsSchema, knownConditionTypes } from "./schemas.ts";

/** The only algorithms a grant may be signed with. */
export const GRANT_ALGORITHMS: readonly string[] = ["EdDSA", "ES256"];

export type { GrantKeys } from "./keys.ts";

export interface VerifyGrantOptions {
  /** Writ's issuer name, as configured on the gateway (`iss`). */
  issuer: string;
  /** This executor's id (`aud`). */
  audience: string;
  keys: GrantKeys;
  /** The action this endpoint performs; omit `version` to accept any version. */
  action?: { name: string; version?: string };
  /** The arguments actually received, compared by digest with the grant's `args` claim. */
  args: unknown;
  /** The resource this request touches. */
  resource?: { type: string; id: string };
  /**
   * The resource's revision as this backend reads it now (`null`: it does not exist), for
   * backends that keep it. A grant is bound to the revision its decision saw (`res.rev`; absent
   * when the resource did not exist then): any other revision is refused `stale_revision`, so an
   * approved call never lands on a resource that changed hands since. Write with a
   * compare-and-swap on `claims.res.rev` too, to close the gap between this check and the write.
   */
  resourceRevision?: string | number | null;
  /**
   * Single-use enforcement. Defaults to an in-process `MemoryReplayCache` shared by every call in
   * this process; pass a shared guard when several replicas serve the same executor id, or
   * `false` when Writ consumes the grant centrally before dispatching.
   */
  replay?: ReplayGuard | false;
  /** Allowed clock skew for `nbf` and `exp` (default 5 s). */
  clockToleranceSeconds?: number;
  now?: Date;
}

const defaultReplayCache = new MemoryReplayCache();

const headerSchema = z.object({
  alg: z.string(),
  typ: z.string().optional(),
  kid: z.string().optional(),
});

const compactJws = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

const requiredClaims = ["sub", "jti", "iat", "nbf", "exp"];

export async function verifyGrant(
  token: string | null | undefined,
  options: VerifyGrantOptions,
): Promise<GrantClaims> {
  if (token === undefined || token === null || token.trim() === "") {
    throw new GrantError(
      "missing_grant",
      "no grant was presented",
      "send the grant Writ issued for this call in `Authorization: Writ-Grant <grant>` or `X-Writ-Grant`",
    );
  }
  const grant = token.trim();
  const header = readHeader(grant);
  const tolerance = toleranceOf(options);
  const now = options.now ?? new Date();

  let payload: Record<string, unknown>;
  try {
    const result = await jwtVerify(grant, keyGetter(options.keys), {
      issuer: options.issuer,
      audience: options.audience,
      algorithms: [...GRANT_ALGORITHMS],
      typ: GRANT_TYPE,
      clockTolerance: tolerance,
      currentDate: now,
      requiredClaims,
    });
    payload = result.payload;
  } catch (error) {
    throw fromJoseError(error, header.kid, options);
  }

  return checkBoundClaims(parseClaims(payload), options);
}

/** What a grant is bound to (action, resource, arguments, revision), then its single use. */
export async function checkBoundClaims(
  claims: GrantClaims,
  options: VerifyGrantOptions,
): Promise<GrantClaims> {
  const tolerance = toleranceOf(options);
  checkAction(claims, options.action);
  checkResource(claims, options.resource);
  checkArguments(claims, options.args);
  if (options.resourceRevision !== undefined) checkRevision(claims, options.resourceRevision);

  const replay = options.replay === undefined ? defaultReplayCache : options.replay;
  if (replay !== false) {
    const maxUses = Math.min(
      claims.max,
      ...claims.cnd.flatMap((condition) => (condition.type === "max_uses" ? [condition.uses] : [])),
    );
    let allowed: boolean;
    try {
      allowed = await replay.consume(claims.jti, maxUses, claims.exp + tolerance);
    } catch (error) {
      throw new GrantError(
        "unavailable",
        `the replay guard failed (${errorMessage(error)})`,
        `the grant was not consumed, retry the request later`,
        { cause: error },
      );
    }
    if (!allowed) {
      throw new GrantError(
        "replayed",
        `grant ${claims.jti} was already used (${maxUses} use${maxUses === 1 ? "" : "s"} allowed)`,
        `ask Writ for a new grant for this call`,
      );
    }
  }
  return claims;
}

function readHeader(grant: string): z.output<typeof headerSchema> {
  if (!compactJws.test(grant)) {
    throw new GrantError(
      "malformed",
      "the grant is not a compact JWS (three base64url segments)",
      "send the grant exactly as Writ issued it",
    );
  }
  let parsed: z.ZodSafeParseResult<z.output<typeof headerSchema>>;
  try {
    parsed = headerSchema.safeParse(decodeProtectedHeader(grant));
  } catch (error) {
    throw new GrantError(
      "malformed",
      "the grant's header is not valid base64url JSON",
      "send the grant exactly as Writ issued it",
      { cause: error },
    );
  }
  if (!parsed.success) {
    throw new GrantError(
      "malformed",
      "the grant's header has no `alg`",
      "send the grant exactly as Writ issued it",
    );
  }
  const header = parsed.data;
  if (header.alg.toLowerCase() === "none") {
    throw new GrantError(
      "alg_not_allowed",
      "the grant is unsigned (alg none) and is never accepted",
      "only grants signed by Writ (EdDSA or ES256) are valid",
    );
  }
  if (!GRANT_ALGORITHMS.includes(header.alg)) {
    throw new GrantError(
      "alg_not_allowed",
      `grant algorithm ${JSON.stringify(header.alg.slice(0, 20))} is not allowed (EdDSA or ES256 only)`,
      `send a grant issued by Writ`,
    );
  }
  const typ = header.typ?.toLowerCase().replace(/^application\//, "");
  if (typ !== GRANT_TYPE) {
    throw new GrantError(
      "wrong_type",
      `the token's typ is ${JSON.stringify(header.typ?.slice(0, 40) ?? null)}, not ${JSON.stringify(GRANT_TYPE)}`,
      `send a Writ grant, not another kind of JWT (identity tokens are not grants)`,
    );
  }
  return header;
}

function fromJoseError(error: unknown, kid: string | undefined, options: VerifyGrantOptions): GrantError {
  const cause = { cause: error };
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new GrantError(
      "bad_signature",
      "the grant's signature does not verify: it was altered or signed by a key Writ did not publish",
      "ask Writ for a new grant",
      cause,
    );
  }
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
    return new GrantError(
      "bad_signature",
      `no key in the configured key set matches the grant's kid ${JSON.stringify(kid?.slice(0, 80) ?? null)}`,
      `check that keys points at the JWKS of the Writ that issued it (the key may also have been retired after its grants expired)`,
      cause,
    );
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return new GrantError(
      "alg_not_allowed",
      "the grant's algorithm does not fit the published keys (EdDSA or ES256 only)",
      "ask Writ for a new grant",
      cause,
    );
  }
  if (error instanceof errors.JWTExpired) return expiredGrant(error.payload.exp, cause);
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case "iss":
        return wrongIssuer(error.payload.iss, options, cause);
      case "aud":
        return wrongAudience(options, cause);
      case "nbf":
        return notYetValid(error.payload.nbf, cause);
      case "typ":
        return new GrantError(
          "wrong_type",
          `the token's typ is not ${GRANT_TYPE}`,
          `send a Writ grant`,
          cause,
        );
      default:
        return new GrantError(
          "malformed",
          `the grant's ${JSON.stringify(error.claim)} claim is ${error.reason === "missing" ? "missing" : "invalid"}`,
          `send the grant exactly as Writ issued it`,
          cause,
        );
    }
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
    return new GrantError(
      "malformed",
      `the grant is not a valid JWT (${error.message})`,
      `send it exactly as Writ issued it`,
      cause,
    );
  }
  return new GrantError(
    "unavailable",
    `the grant could not be checked: Writ's key set is unavailable (${errorMessage(error)})`,
    `retry later and check the keys URL`,
    cause,
  );
}

function parseClaims(payload: Record<string, unknown>): GrantClaims {
  const conditions = payload.cnd;
  if (Array.isArray(conditions)) {
    for (const condition of conditions) {
      const type: unknown =
        typeof condition === "object" && condition !== null ? Reflect.get(condition, "type") : undefined;
      if (typeof type === "string" && !knownConditionTypes.has(type)) {
        throw new GrantError(
          "unknown_condition",
          `the grant carries a condition this executor does not know (${JSON.stringify(type.slice(0, 60))})`,
          `unknown conditions mean deny — upgrade writ/executor before accepting such grants`,
        );
      }
    }
  }
  const parsed = grantClaimsSchema.safeParse(payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined ? "" : ` at /${issue.path.join("/")}: ${issue.message}`;
    throw new GrantError(
      "malformed",
      `the grant's claims are not a valid Writ grant${where}`,
      `ask Writ for a new grant`,
    );
  }
  return parsed.data;
}

function checkAction(claims: GrantClaims, action: VerifyGrantOptions["action"]): void {
  if (action === undefined) return;
  if (
    claims.act.name !== action.name ||
    (action.version !== undefined && claims.act.version !== action.version)
  ) {
    const wanted = action.version === undefined ? action.name : `${action.name}@${action.version}`;
    throw new GrantError(
      "action_mismatch",
      `the grant is for action ${claims.act.name}@${claims.act.version}, but this endpoint performs ${wanted}`,
      `send the grant to the endpoint it was issued for`,
    );
  }
}

function checkResource(claims: GrantClaims, resource: VerifyGrantOptions["resource"]): void {
  if (resource === undefined) return;
  if (claims.res.type !== resource.type || claims.res.id !== resource.id) {
    throw new GrantError(
      "resource_mismatch",
      `the grant is for resource ${claims.res.type}:${claims.res.id}, not ${resource.type}:${resource.id}`,
      `ask Writ for a grant for the resource you are calling`,
    );
  }
}

/**
 * The revision a grant is bound to: its `res.rev`, or none (`null`) when the resource did not
 * exist when it was decided. Undefined for a grant that names no resource.
 */
export function boundRevision(claims: Pick<GrantClaims, "res">): string | null | undefined {
  if (claims.res.type === "none") return undefined;
  return claims.res.rev ?? null;
}

function checkRevision(claims: GrantClaims, current: string | number | null): void {
  const bound = boundRevision(claims);
  if (bound === undefined) return;
  const now = current === null ? null : String(current);
  if (now !== bound) {
    throw new GrantError(
      "stale_revision",
      `resource ${claims.res.type}:${claims.res.id} ${now === null ? "no longer exists" : `is at revision ${now}`}, but the grant was decided on ${bound === null ? "its absence" : `revision ${bound}`}`,
      "propose the call again: the decision must see the resource as it is now",
    );
  }
}

function checkArguments(claims: GrantClaims, args: unknown): void {
  let digest: string;
  try {
    digest = jsonDigest(args);
  } catch {
    throw new GrantError(
      "args_mismatch",
      "the received arguments are not a JSON value, so they cannot match the grant",
      "send exactly the arguments Writ approved",
    );
  }
  if (digest !== claims.args) {
    throw new GrantError(
      "args_mismatch",
      "the received arguments differ from the ones Writ approved (digest mismatch)",
      "send exactly the approved arguments or ask Writ for a new grant",
    );
  }
  for (const condition of claims.cnd) checkCondition(condition, args);
}

/** The conditions an executor can check from the arguments alone; the rest are returned to the caller. */
function checkCondition(condition: Condition, args: unknown): void {
  if (condition.type === "args_override") {
    for (const [name, forced] of Object.entries(condition.args)) {
      const received = typeof args === "object" && args !== null ? Reflect.get(args, name) : undefined;
      if (received === undefined || canonicalJson(received) !== canonicalJson(forced)) {
        throw new GrantError(
          "args_mismatch",
          `the grant forces argument ${JSON.stringify(name)} to ${canonicalJson(forced)}`,
          `send the arguments with that value`,
        );
      }
    }
  } else if (condition.type === "max_value") {
    const value = atPointer(args, condition.path);
    if (typeof value !== "number" || !(value <= condition.max)) {
      throw new GrantError(
        "args_mismatch",
        `the grant limits ${condition.path} to at most ${condition.max}`,
        `send a number within the limit`,
      );
    }
  }
}

function isoOf(seconds: unknown): string {
  return typeof seconds === "number" && Number.isFinite(seconds)
    ? new Date(seconds * 1000).toISOString()
    : "an unknown time";
}

/** The clock skew allowed for `nbf` and `exp`, in seconds. */
export function toleranceOf(options: Pick<VerifyGrantOptions, "clockToleranceSeconds">): number {
  return options.clockToleranceSeconds ?? 5;
}

// The refusals of a grant's time, issuer and audience, the same whether jose or `checkIssuedGrant`
// (executor/issued.ts) found them.

type Cause = { cause?: unknown };

export function expiredGrant(exp: unknown, cause?: Cause): GrantError {
  return new GrantError(
    "expired",
    `the grant expired at ${isoOf(exp)}`,
    `grants are short-lived, ask Writ for a new one and use it right away`,
    cause,
  );
}

export function notYetValid(nbf: unknown, cause?: Cause): GrantError {
  return new GrantError(
    "not_yet_valid",
    `the grant is not valid before ${isoOf(nbf)}`,
    `check that the clocks of Writ and this executor are synchronized`,
    cause,
  );
}

export function wrongIssuer(
  iss: unknown,
  options: Pick<VerifyGrantOptions, "issuer">,
  cause?: Cause,
): GrantError {
  return new GrantError(
    "wrong_issuer",
    `the grant was issued by ${JSON.stringify(String(iss ?? "nobody").slice(0, 80))}, not ${JSON.stringify(options.issuer)}`,
    `get the grant from the Writ this executor trusts`,
    cause,
  );
}

export function wrongAudience(options: Pick<VerifyGrantOptions, "audience">, cause?: Cause): GrantError {
  return new GrantError(
    "wrong_audience",
    `the grant is for another executor, not ${JSON.stringify(options.audience)}`,
    `send it to the executor named in the grant or ask Writ for a grant for this one`,
    cause,
  );
}
