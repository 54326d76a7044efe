/** Test configuration for tenancy: the default roles plus a platform role (none by default). */

/** The platform role the tenancy tests configure (config `roles.platform`). */
export const PLATFORM_ROLE = "platform-admin";

/** A `startTestGateway` `configure` that adds {@link PLATFORM_ROLE} to the default roles. */
export function withPlatformRole(document: Record<string, unknown>): Record<string, unknown> {
  return {
    ...document,
    roles: {
      reviewer: ["reviewer"],
      admin: ["admin"],
      approver: ["maintainer", "treasurer"],
      platform: [PLATFORM_ROLE],
    },
  };
}
