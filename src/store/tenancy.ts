/**
 * Whose data an administrative or review read or write may touch: one tenant's (every caller's
 * own), or every tenant's (a platform role, and only when the caller asks for it explicitly).
 */
export type TenantScope = { readonly tenant: string } | { readonly allTenants: true };

/** The scope of every tenant's data (platform roles only). */
export const ALL_TENANTS: TenantScope = Object.freeze({ allTenants: true });

/** Whether `tenant` (a stored row's, possibly null) is within `scope`. */
export function inScope(scope: TenantScope, tenant: string | null): boolean {
  return "allTenants" in scope || scope.tenant === tenant;
}
