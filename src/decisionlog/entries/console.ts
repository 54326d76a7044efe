/** The entry of a console sign-in (granted or refused) or sign-out. */
import type { Subject } from "../../core/types.ts";
import type { DecisionParts } from "../log.ts";

/** How much of a session's hash an entry keeps: enough to tell sessions apart, never the id. */
const SESSION_PREFIX = 16;

export interface ConsoleFacts {
  event: "sign_in" | "sign_out";
  /** Who (null: a sign-in whose token did not verify). */
  actor: Pick<Subject, "id" | "tenant" | "roles"> | null;
  /** The session signed in or out (absent for a refused sign-in). */
  session?: { idHash: string; expiresAt: Date };
  /** The outcome's one reason, and the refusal's error (null: it went through). */
  code: string;
  message: string;
  error: { category: string } | null;
  requestId: string;
  policyRevision: string;
}

/** A console entry on the chain: who (when known), what, and the outcome's one reason. */
export function consoleParts(path: string, f: ConsoleFacts): DecisionParts {
  const actor = f.actor === null ? null : { id: f.actor.id, tenant: f.actor.tenant, roles: f.actor.roles };
  const session =
    f.session === undefined
      ? {}
      : { session: f.session.idHash.slice(0, SESSION_PREFIX), expires_at: f.session.expiresAt.toISOString() };
  return {
    path,
    input: { surface: "console", event: f.event, actor, ...session },
    policy_revision: f.policyRevision,
    subject: actor?.id ?? null,
    tenant: actor?.tenant ?? null,
    action: `console.${f.event}`,
    resource: null,
    decision: f.error === null ? "allow" : "deny",
    reasons: [{ code: f.code, message: f.message, visible_to_model: false }],
    error: f.error?.category ?? null,
    request_id: f.requestId,
  };
}
