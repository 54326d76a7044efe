/**
 * The `requestState` of a round on the 2026-07-28 revision: what a client echoes back when it
 * retries a call that needed approval (approval-flow.ts) or input an upstream server asked for
 * (upstream-input.ts). It names the approval, or carries the upstream's own state, and is bound
 * to the caller (subject id and tenant) and to the call (method, name, canonical arguments: their
 * digest), and it expires.
 *
 * It is a compact JWS signed with the gateway's grant keys (`GrantSigner.signDocument`, under a
 * `typ` of its own, which no executor accepts as a grant's) and verified against their public
 * halves: the key set every instance on one store shares (the PostgreSQL table or the grant key
 * file), so that a round minted by one instance is accepted by another, and a rotation is seen
 * by all (an unknown `kid` reloads the key set, as dispatch does for grants). After a rotation,
 * a state signed with the retired key verifies while the key is published: on the instance that
 * signed it until the state expires, on the others for `grants.max_ttl_s +
 * retired_key_grace_s`; past that its retry is refused and calling again without it picks up
 * the open approval with a fresh state. The SDK's
 * `createRequestStateCodec` would need an HMAC secret shared by the instances besides; the
 * grant keys already are. Signed, not encrypted: the client can read what it holds (its own id,
 * tenant, the approval id and a digest of its own call), nothing else.
 *
 * Possessing a valid state proves nothing more than that Writ minted it: the retry still checks
 * that the caller is the state's subject, that the call is the state's call (here), and that the
 * approval is the caller's and how it stands (approved.ts).
 */
import { randomUUID } from "node:crypto";
import { createLocalJWKSet, decodeProtectedHeader, errors, jwtVerify } from "jose";
import { z } from "zod";
import { jsonDigest } from "../core/digest.ts";
import { WritError } from "../core/errors.ts";
import type { Gateway } from "../core/gateway.ts";
import type { Subject } from "../core/types.ts";
import { nowOf } from "../pipeline/06-approval.ts";
import type { ProposedMessage } from "./methods/approved.ts";

/** The JWS `typ` of a request state (a grant's is `writ-grant+jwt`). */
export const REQUEST_STATE_TYPE = "writ-request-state+jwt";
/** The `aud` of a request state: Writ's MCP endpoint, nothing else. */
const REQUEST_STATE_AUDIENCE = "writ:mcp:request-state";
/** The longest state read (a minted one is well under 1 KiB). */
const MAX_STATE_LENGTH = 16_384;
/** The longest upstream state a state carries. */
export const MAX_UPSTREAM_STATE_LENGTH = 8192;

/** What a state is bound to: the caller, the call, and the approval or the upstream's state. */
export type StateBinding = {
  subject: Pick<Subject, "id" | "tenant">;
  call: ProposedMessage;
} & Round;

/** What a state names: an approval, or an upstream server's own `requestState` ("" for none). */
export type Round =
  | { approvalId: string; upstreamState?: undefined }
  | { upstreamState: string; approvalId?: undefined };

const claimsSchema = z.object({
  sub: z.string().min(1),
  tnt: z.string().min(1),
  /** The approval. */
  apr: z.string().min(1).optional(),
  /** The upstream server's own state (an input round). */
  ups: z.string().max(MAX_UPSTREAM_STATE_LENGTH).optional(),
  /** The call's method. */
  mth: z.string().min(1),
  /** The call's digest (`callDigest`). */
  dig: z.string().regex(/^[0-9a-f]{64}$/),
});

/** Why a state was refused (`reason` of the error, and of its log entry). */
export type StateRefusal = "malformed" | "signature" | "expired" | "subject" | "call";

/** A `requestState` Writ does not accept: `invalid_argument`, with the reason. */
export class RequestStateError extends WritError {
  constructor(
    readonly reason: StateRefusal,
    detail: string,
  ) {
    super("invalid_argument", `the requestState was refused: ${detail}`, {
      suggestedFix:
        "call again without requestState and inputResponses: Writ decides the call anew, and a call still waiting for approval gets its open approval back with a fresh requestState",
    });
  }
}

/** SHA-256 of the call's canonical JSON (method and params: name or URI, and arguments). */
export function callDigest(call: ProposedMessage): string {
  return jsonDigest({ method: call.method, params: call.params });
}

/** Mints a state for `binding`, valid until `expiresAt`. */
export function mintRequestState(gw: Gateway, binding: StateBinding, expiresAt: Date): Promise<string> {
  const iat = Math.floor(nowOf(gw).getTime() / 1000);
  return gw.grants.signDocument(REQUEST_STATE_TYPE, {
    iss: gw.grants.issuer,
    aud: REQUEST_STATE_AUDIENCE,
    sub: binding.subject.id,
    tnt: binding.subject.tenant,
    ...(binding.approvalId === undefined ? { ups: binding.upstreamState } : { apr: binding.approvalId }),
    mth: binding.call.method,
    dig: callDigest(binding.call),
    iat,
    exp: Math.max(iat + 1, Math.ceil(expiresAt.getTime() / 1000)),
    jti: randomUUID(),
  });
}

/**
 * The approval (or upstream state) a state names, once its signature, type, issuer, audience and expiry check out and
 * it is bound to this caller and this call. Throws `RequestStateError` otherwise.
 */
export async function verifyRequestState(
  gw: Gateway,
  state: string,
  expected: { subject: Pick<Subject, "id" | "tenant">; call: ProposedMessage },
): Promise<Round> {
  if (state.length > MAX_STATE_LENGTH) {
    throw new RequestStateError("malformed", `it is longer than ${MAX_STATE_LENGTH} characters`);
  }
  const payload = await verifiedPayload(gw, state);
  const claims = claimsSchema.safeParse(payload);
  if (!claims.success) throw new RequestStateError("malformed", "its claims are not a request state's");
  const { sub, tnt, apr, ups, mth, dig } = claims.data;
  if (sub !== expected.subject.id || tnt !== expected.subject.tenant) {
    throw new RequestStateError("subject", "it was issued to another caller");
  }
  if (mth !== expected.call.method || dig !== callDigest(expected.call)) {
    throw new RequestStateError("call", "it was issued for another call (method, name or arguments differ)");
  }
  if (apr !== undefined && ups === undefined) return { approvalId: apr };
  if (ups !== undefined && apr === undefined) return { upstreamState: ups };
  throw new RequestStateError("malformed", "its claims are not a request state's");
}

/** The state's payload once its signature and registered claims check out. */
async function verifiedPayload(gw: Gateway, state: string): Promise<unknown> {
  const verify = async () =>
    (
      await jwtVerify(state, createLocalJWKSet(gw.grants.jwks()), {
        issuer: gw.grants.issuer,
        audience: REQUEST_STATE_AUDIENCE,
        typ: REQUEST_STATE_TYPE,
        algorithms: ["EdDSA", "ES256"],
        requiredClaims: ["exp", "iat", "sub"],
        currentDate: nowOf(gw),
      })
    ).payload;
  try {
    return await verify().catch(async (error: unknown) => {
      // Signed with a key another instance rotated in since this one last looked: look again.
      const kid = error instanceof errors.JWKSNoMatchingKey ? kidOf(state) : undefined;
      if (kid !== undefined && (await gw.grants.reloadForKid(kid))) return verify();
      throw error;
    });
  } catch (error) {
    throw refusalOf(error);
  }
}

function kidOf(state: string): string | undefined {
  try {
    return decodeProtectedHeader(state).kid;
  } catch {
    return undefined;
  }
}

function refusalOf(error: unknown): RequestStateError {
  if (error instanceof errors.JWTExpired) return new RequestStateError("expired", "it has expired");
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey) {
    return new RequestStateError("signature", "its signature does not verify with Writ's keys");
  }
  if (error instanceof errors.JOSEError) {
    return new RequestStateError("malformed", "it is not a request state Writ issued");
  }
  throw error;
}
