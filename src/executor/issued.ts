/** `checkIssuedGrant` (pipeline/09-dispatch.ts `issued`). */
import type { GrantClaims } from "../core/types.ts";
import {
  checkBoundClaims,
  expiredGrant,
  notYetValid,
  toleranceOf,
  type VerifyGrantOptions,
  wrongAudience,
  wrongIssuer,
} from "./verify.ts";

/**
 * The checks of `verifyGrant` for a grant this process's signer issued for the call at hand,
 * whose token has not left the process since (Writ's dispatch of the call it just decided): the
 * signature of a token made in this process's memory proves nothing more, so it is not checked
 * again (a signature check costs about as much as signing); issuer, audience, time and every
 * claim are. Not on `writ/executor`'s surface: a backend always gets a token from outside and runs
 * `verifyGrant`.
 */
export async function checkIssuedGrant(
  claims: GrantClaims,
  options: VerifyGrantOptions,
): Promise<GrantClaims> {
  const tolerance = toleranceOf(options);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (claims.iss !== options.issuer) throw wrongIssuer(claims.iss, options);
  if (claims.aud !== options.audience) throw wrongAudience(options);
  if (now - tolerance >= claims.exp) throw expiredGrant(claims.exp);
  if (now + tolerance < claims.nbf) throw notYetValid(claims.nbf);
  return checkBoundClaims(claims, options);
}
