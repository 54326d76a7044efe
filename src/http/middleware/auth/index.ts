/**
 * Authentication and roles for the API routes. `authenticate()` verifies the bearer JWT once per
 * request with the gateway's `IdentityVerifier` and sets the typed `c.var.subject`; a refused
 * token is its `unauthenticated` WritError, answered by the app's one `onError`.
 * `requireRole()` runs after it: a subject without one of the roles is `forbidden`.
 *
 * `POST /v1/proposals` does not use it: there the pipeline's identity stage refuses an
 * unauthenticated proposal and logs each refused call.
 */
import { createMiddleware } from "hono/factory";
import { WritError } from "../../../core/errors.ts";
import type { Subject } from "../../../core/types.ts";
import { hasAnyRole } from "../../../identity/roles.ts";
import type { SubjectVariables } from "../../env.ts";

/** What authentication needs of the identity stage. */
export interface BearerVerifier {
  verify(authorizationHeader: string | undefined): Promise<Subject>;
}

export function authenticate(identity: BearerVerifier) {
  return createMiddleware<{ Variables: SubjectVariables }>(async (c, next) => {
    c.set("subject", await identity.verify(c.req.header("authorization")));
    await next();
  });
}

/** Refuses a subject that carries none of `allowed`; `what` names the operation in the message. */
export function requireRole(allowed: readonly string[], what: string) {
  return createMiddleware<{ Variables: SubjectVariables }>(async (c, next) => {
    if (!hasAnyRole(c.var.subject, allowed)) {
      throw new WritError("forbidden", `${what} needs one of the roles ${allowed.join(", ")}`, {
        suggestedFix: "use a token that carries one of those roles",
      });
    }
    await next();
  });
}
