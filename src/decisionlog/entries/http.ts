/**
 * Entries of the HTTP layer's own decisions: a refused request (401, 403, 400, 413), a reach into
 * another tenant (granted or refused), and a resource written (or refused) by an admin.
 */
import { jsonDigest } from "../../core/digest.ts";
import type { WritError } from "../../core/errors.ts";
import type { ResourceRef, Subject } from "../../core/types.ts";
import type { StoredResource } from "../../store/types.ts";
import type { DecisionParts } from "../log.ts";

/** Longest message of a refused request kept in its entry (it may quote what the caller sent). */
const HTTP_MESSAGE_LIMIT = 500;

export interface HttpRefusalFacts {
  /** The route, e.g. `GET /v1/decisions/:id` (its pattern, not the path the caller sent). */
  surface: string;
  /** The caller's address. */
  source: string;
  subject: Pick<Subject, "id" | "tenant"> | null;
  error: WritError;
  requestId: string;
  policyRevision: string;
}

/**
 * A request the HTTP layer refused: `deny` for an authorization refusal (403), `error` for the
 * others (no token, a malformed or too large body), with the error's category.
 */
export function httpRefusalParts(path: string, f: HttpRefusalFacts): DecisionParts {
  const message =
    f.error.message.length > HTTP_MESSAGE_LIMIT
      ? `${f.error.message.slice(0, HTTP_MESSAGE_LIMIT)}… (${f.error.message.length} characters)`
      : f.error.message;
  return {
    path,
    input: { surface: f.surface, source: f.source, status: f.error.httpStatus },
    policy_revision: f.policyRevision,
    subject: f.subject?.id ?? null,
    tenant: f.subject?.tenant ?? null,
    action: f.surface,
    resource: null,
    decision: f.error.category === "forbidden" ? "deny" : "error",
    error: f.error.category,
    reasons: [{ code: f.error.category, message, visible_to_model: false }],
    request_id: f.requestId,
  };
}

/** Who acted, as an entry's input names them. */
type Actor = Pick<Subject, "id" | "tenant" | "roles">;

export interface TenancyFacts {
  /** The surface reached, e.g. `GET /v1/decisions`. */
  surface: string;
  actor: Actor;
  /** The tenant named (`*`: every tenant). */
  target: string;
  /** Whether the target is every tenant (then the entry is on no tenant's record). */
  everyTenant: boolean;
  allowed: boolean;
  requestId: string;
  policyRevision: string;
}

/** A reach into another tenant: `allow` with a platform role, else `deny` (`forbidden`). */
export function tenancyParts(path: string, f: TenancyFacts): DecisionParts {
  const { actor, target } = f;
  return {
    path,
    input: {
      surface: f.surface,
      actor: { id: actor.id, tenant: actor.tenant, roles: actor.roles },
      target_tenant: target,
    },
    policy_revision: f.policyRevision,
    subject: actor.id,
    // On the target tenant's record, so that its reviewers see who looked (null: every tenant).
    tenant: f.everyTenant ? null : target,
    action: f.surface,
    resource: null,
    decision: f.allowed ? "allow" : "deny",
    reasons: [
      f.allowed
        ? {
            code: "platform_reach",
            message: `${actor.id} of tenant ${actor.tenant} reached tenant ${target} with a platform role`,
            visible_to_model: false,
          }
        : {
            code: "cross_tenant_refused",
            message: `${actor.id} of tenant ${actor.tenant} asked for tenant ${target} without a platform role`,
            visible_to_model: false,
          },
    ],
    error: f.allowed ? null : "forbidden",
    request_id: f.requestId,
  };
}

/** A resource's version as a write entry records it: its attributes by digest only. */
function versionOf(r: StoredResource | undefined) {
  return r === undefined
    ? null
    : { owner: r.owner, tenant: r.tenant, revision: r.revision, attributes_digest: jsonDigest(r.attributes) };
}

export interface ResourceWriteFacts {
  /** The surface written through (`PUT /v1/resources`). */
  surface: string;
  actor: Actor;
  resource: ResourceRef;
  /** The tenant the resource was written for. */
  tenant: string;
  /** Written (the version before, if any, and after), or refused: another tenant holds the name. */
  outcome:
    | { kind: "written"; before: StoredResource | undefined; after: StoredResource }
    | { kind: "held_elsewhere" };
  requestId: string;
  policyRevision: string;
}

/** A resource write: `allow` with the versions before and after, or `deny` (`conflict`). */
export function resourceWriteParts(path: string, f: ResourceWriteFacts): DecisionParts {
  const actor = { id: f.actor.id, tenant: f.actor.tenant, roles: f.actor.roles };
  const common = {
    path,
    policy_revision: f.policyRevision,
    subject: actor.id,
    action: f.surface,
    resource: f.resource,
    request_id: f.requestId,
  };
  if (f.outcome.kind === "held_elsewhere") {
    return {
      ...common,
      input: { actor, resource: f.resource, tenant: f.tenant },
      tenant: actor.tenant,
      decision: "deny",
      reasons: [
        {
          code: "resource_held_elsewhere",
          message: "another tenant holds this name",
          visible_to_model: false,
        },
      ],
      error: "conflict",
    };
  }
  return {
    ...common,
    input: {
      actor,
      resource: f.resource,
      before: versionOf(f.outcome.before),
      after: versionOf(f.outcome.after),
    },
    tenant: f.tenant,
    decision: "allow",
  };
}
