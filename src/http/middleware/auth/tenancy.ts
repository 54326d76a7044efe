/**
 * Whose data an administrative or review request reaches (issue 15): the caller's own tenant
 * (`subject.tenant` from the verified token), unless the caller holds a platform role named in
 * the configuration (`roles.platform`, none by default) and names another tenant (`*`: all). The
 * API routes and the console call this one function, and pass its scope to the store's scoped
 * methods, which require one. Every cross-tenant reach, granted or refused, is a decision-log
 * entry on the chain: who, on which surface, which tenant.
 */
import { WritError } from "../../../core/errors.ts";
import type { Subject } from "../../../core/types.ts";
import { type DecisionParts, tenancyEntry } from "../../../decisionlog/index.ts";
import { hasAnyRole } from "../../../identity/roles.ts";
import { ALL_TENANTS, type TenantScope } from "../../../store/types.ts";

/** What a platform caller names to reach every tenant at once. */
export const EVERY_TENANT = "*";

export interface ScopeRequest {
  subject: Subject;
  /** The tenant the caller asked for (`?tenant=`, a body's `tenant`); undefined: their own. */
  requested: string | undefined;
  platformRoles: readonly string[];
  /** The surface, for the log and messages, e.g. `GET /v1/decisions`. */
  surface: string;
  requestId: string;
  policyRevision: string;
}

export interface ScopeLog {
  append(parts: DecisionParts): Promise<unknown>;
}

export function isPlatform(subject: Subject, platformRoles: readonly string[]): boolean {
  return hasAnyRole(subject, platformRoles);
}

/** What a route knows of the request: the verified caller and the request id. */
export interface ScopedContext {
  var: { subject: Subject; requestId: string };
}

/** `tenantScope` for the API routes: `(c, requested, surface)` with the gateway's parts bound. */
export function routeScope(
  gw: { log: ScopeLog; policy: { readonly revision: string | undefined } },
  platformRoles: readonly string[],
) {
  return (c: ScopedContext, requested: string | undefined, surface: string): Promise<TenantScope> =>
    tenantScope(gw.log, {
      subject: c.var.subject,
      requested,
      platformRoles,
      surface,
      requestId: c.var.requestId,
      policyRevision: gw.policy.revision ?? "none",
    });
}

/** The scope of a request; `forbidden` (logged) when it names another tenant without a platform role. */
export async function tenantScope(log: ScopeLog, r: ScopeRequest): Promise<TenantScope> {
  const own = r.subject.tenant;
  if (r.requested === undefined || r.requested === own) return { tenant: own };
  const allowed = isPlatform(r.subject, r.platformRoles);
  await log.append(
    tenancyEntry({
      surface: r.surface,
      actor: r.subject,
      target: r.requested,
      everyTenant: r.requested === EVERY_TENANT,
      allowed,
      requestId: r.requestId,
      policyRevision: r.policyRevision,
    }),
  );
  if (!allowed) {
    throw new WritError("forbidden", `${r.surface} reaches your own tenant (${own}) only`, {
      suggestedFix:
        r.platformRoles.length === 0
          ? "omit tenant (your own is used); reaching other tenants needs a platform role, and none is configured (roles.platform)"
          : `omit tenant (your own is used), or use a token with one of the platform roles ${r.platformRoles.join(", ")}`,
    });
  }
  return r.requested === EVERY_TENANT ? ALL_TENANTS : { tenant: r.requested };
}
