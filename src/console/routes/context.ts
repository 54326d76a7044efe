/**
 * What every group of console routes shares: the gateway, the roles and session settings, the
 * chain's status, the viewer's tenant scope, and the strict reading of addresses and forms.
 */
import type { Context } from "hono";
import { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../../core/errors.ts";
import type { Gateway } from "../../core/gateway.ts";
import type { ChainMonitor } from "../../decisionlog/index.ts";
import { tenantScope } from "../../http/middleware/auth/tenancy.ts";
import { currentRevision } from "../../pipeline/08-log.ts";
import type { TenantScope } from "../../store/types.ts";
import type { ConsoleEnv, ConsoleRoles, ConsoleSessionSettings } from "../session.ts";

export interface ConsoleContext {
  gw: Gateway;
  roles: ConsoleRoles;
  sessions: ConsoleSessionSettings;
  /** The chain's status on every page, without a full walk of the log on every page. */
  chain: ChainMonitor;
}

/** A decision or approval id from the path. */
export const idSchema = z.string().min(1).max(200);

export function parseExternal<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new WritError("invalid_argument", `${what} is not valid`, {
      fieldErrors: fieldErrorsFromZod(parsed.error),
      suggestedFix: "correct the fields listed and try again",
    });
  }
  return parsed.data;
}

export async function formOf(c: Context): Promise<Record<string, unknown>> {
  return { ...(await c.req.parseBody()) };
}

/** Writ's own id of the request (the app's request-id middleware runs before the console). */
export function requestIdOf(c: Context<ConsoleEnv>): string {
  return c.var.requestId;
}

/** The viewer's tenant, or the one a platform role names (logged): the same rule as the API. */
export function scopeOf(
  ctx: ConsoleContext,
  c: Context<ConsoleEnv>,
  requested: string | undefined,
  surface: string,
): Promise<TenantScope> {
  return tenantScope(ctx.gw.log, {
    subject: c.get("viewer").subject,
    requested,
    platformRoles: ctx.roles.platform ?? [],
    surface,
    requestId: requestIdOf(c),
    policyRevision: currentRevision(ctx.gw),
  });
}
