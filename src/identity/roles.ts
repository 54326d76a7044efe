/** Role checks: whether a subject carries one of the roles an operation asks for. */
import type { Subject } from "../core/types.ts";

/** True when `subject` carries at least one of `roles` (none asked for: false). */
export function hasAnyRole(subject: Pick<Subject, "roles">, roles: readonly string[]): boolean {
  return subject.roles.some((role) => roles.includes(role));
}
