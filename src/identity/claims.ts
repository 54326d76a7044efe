/**
 * Verified claims → `Subject`. A claim name is looked up as a top-level claim first, then, if it
 * contains dots and no such claim exists, as a path (`realm_access.roles`).
 */
import { z } from "zod";
import type { Subject } from "../core/types.ts";
import type { IssuerConfig } from "./config.ts";

export const DEFAULT_TENANT = "default";

const payloadSchema = z.record(z.string(), z.unknown());
const nonEmpty = z.string().min(1);
const stringList = z.union([
  z.array(z.string()),
  z.string().transform((value) => value.split(/\s+/).filter((item) => item !== "")),
]);

/** Why the claims cannot become a subject (the caller turns it into an `unauthenticated` error). */
export class ClaimsError extends Error {}

function claim(payload: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(payload, name) || !name.includes(".")) return payload[name];
  let current: unknown = payload;
  for (const part of name.split(".")) {
    if (
      typeof current !== "object" ||
      current === null ||
      Array.isArray(current) ||
      !Object.hasOwn(current, part)
    ) {
      return undefined;
    }
    current = Reflect.get(current, part);
  }
  return current;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** The subject for a verified payload; deeply frozen, since the cache hands the same object to every request. */
export function subjectFromClaims(rawPayload: unknown, config: IssuerConfig): Subject {
  const payload = payloadSchema.parse(rawPayload);
  const names = config.claims;

  const id = nonEmpty.safeParse(claim(payload, names.subject));
  if (!id.success)
    throw new ClaimsError(`the token has no ${JSON.stringify(names.subject)} claim (a non-empty string)`);

  const rawTenant = claim(payload, names.tenant);
  const tenant =
    rawTenant === undefined
      ? { success: true as const, data: DEFAULT_TENANT }
      : nonEmpty.safeParse(rawTenant);
  if (!tenant.success)
    throw new ClaimsError(`the token's ${JSON.stringify(names.tenant)} claim is not a non-empty string`);

  const list = (name: string): string[] => {
    const value = claim(payload, name);
    if (value === undefined) return [];
    const parsed = stringList.safeParse(value);
    if (!parsed.success) {
      throw new ClaimsError(
        `the token's ${JSON.stringify(name)} claim is neither a string nor an array of strings`,
      );
    }
    return parsed.data;
  };

  return deepFreeze({
    id: id.data,
    tenant: tenant.data,
    roles: list(names.roles),
    scopes: list(names.scopes),
    issuer: config.issuer,
    claims: payload,
  });
}
