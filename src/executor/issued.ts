/** `checkIssuedGrant` (pipeline/09-dispatch.ts `issued`). */
import type { GrantClaims } from "../core/types.ts";
import { GrantError } from "./errors.ts";
import { checkBoundClaims, isoOf, type VerifyGrantOptions } from "./verify.ts";

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
  const tolerance = options.clockToleranceSeconds ?? 5;
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (claims.iss !== options.issuer) {
    throw new GrantError(
      "wrong_issuer",
      `the grant was issued by ${JSON.stringify(claims.iss.slice(0, 80))}, not ${JSON.stringify(options.issuer)}`,
      `get the grant from the Writ this executor trusts`,
    );
  }
  if (claims.aud !== options.audience) {
    throw new GrantError(
      "wrong_audience",
      `the grant is for another executor, not ${JSON.stringify(options.audience)}`,
      `send it to the executor named in the grant or ask Writ for a grant for this one`,
    );
  }
  if (now - tolerance >= claims.exp) {
    throw new GrantError(
      "expired",
      `the grant expired at ${isoOf(claims.exp)}`,
      `grants are short-lived, ask Writ for a new one and use it right away`,
    );
  }
  if (now + tolerance < claims.nbf) {
    throw new GrantError(
      "not_yet_valid",
      `the grant is not valid before ${isoOf(claims.nbf)}`,
      `check that the clocks of Writ and this executor are synchronized`,
    );
  }
  return checkBoundClaims(claims, options);
}
