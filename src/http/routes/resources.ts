/**
 * Resources and their owners, the policy's context (admin role), each within its tenant:
 *
 *   PUT /v1/resources/:type/:id  create or replace one of the caller's tenant
 *   GET /v1/resources/:type/:id  read one of the caller's tenant (another tenant's: 404)
 *
 * The body's `tenant` defaults to the caller's; naming another (or `?tenant=` on a read) needs a
 * platform role (see middleware/auth/tenancy.ts). (type, id) names are shared by every tenant: a
 * name another tenant holds cannot be written. Every write, and every refused one, is logged.
 */
import { Hono } from "hono";
import { z } from "zod";
import { WritError } from "../../core/errors.ts";
import { type ResourceWriteFacts, resourceWriteEntry } from "../../decisionlog/index.ts";
import type { ResourceStore } from "../../store/types.ts";
import type { HttpEnv } from "../env.ts";
import { authenticate, type BearerVerifier, requireRole } from "../middleware/auth/index.ts";
import { EVERY_TENANT, routeScope, type ScopeLog } from "../middleware/auth/tenancy.ts";
import { jsonBody, parseWith } from "../request.ts";

const tenantName = z
  .string()
  .min(1)
  .max(200)
  .refine((t) => t !== EVERY_TENANT, "a resource belongs to one tenant");

const resourceBodySchema = z
  .object({
    owner: z.string().min(1),
    tenant: tenantName.optional(),
    attributes: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

const resourceQuerySchema = z.object({ tenant: tenantName.optional() }).strict();

/** What the resource routes use of the gateway. */
export interface ResourceRoutesGateway {
  identity: BearerVerifier;
  store: Pick<ResourceStore, "putResourceIn" | "getResourceIn">;
  log: ScopeLog;
  policy: { readonly revision: string | undefined };
}

export function resourceRoutes(
  gw: ResourceRoutesGateway,
  adminRoles: readonly string[],
  platformRoles: readonly string[] = [],
): Hono<HttpEnv> {
  const authenticated = authenticate(gw.identity);
  const scopeOf = routeScope(gw, platformRoles);
  const logWrite = (
    facts: Omit<ResourceWriteFacts, "surface" | "policyRevision" | "requestId">,
    requestId: string,
  ) =>
    gw.log.append(
      resourceWriteEntry({
        ...facts,
        surface: "PUT /v1/resources",
        requestId,
        policyRevision: gw.policy.revision ?? "none",
      }),
    );

  return new Hono<HttpEnv>()
    .put("/:type/:id", authenticated, requireRole(adminRoles, "writing resources"), async (c) => {
      const { subject, requestId } = c.var;
      const body = parseWith(resourceBodySchema, await jsonBody(c.req.raw), "", "the resource");
      const tenant = body.tenant ?? subject.tenant;
      const scope = await scopeOf(c, tenant, "PUT /v1/resources");
      const ref = { type: c.req.param("type"), id: c.req.param("id") };
      const written = await gw.store.putResourceIn(scope, {
        ...ref,
        owner: body.owner,
        tenant,
        attributes: body.attributes,
      });
      if (!written.ok) {
        await logWrite(
          { actor: subject, resource: ref, tenant, outcome: { kind: "held_elsewhere" } },
          requestId,
        );
        throw new WritError("conflict", `${ref.type}/${ref.id} cannot be written by tenant ${tenant}`, {
          suggestedFix: "resource names are shared by every tenant: choose another id",
        });
      }
      await logWrite(
        {
          actor: subject,
          resource: ref,
          tenant,
          outcome: { kind: "written", before: written.previous, after: written.resource },
        },
        requestId,
      );
      return c.json(written.resource);
    })
    .get("/:type/:id", authenticated, requireRole(adminRoles, "reading resources"), async (c) => {
      const q = parseWith(resourceQuerySchema, c.req.query(), "", "the resource query");
      const scope = await scopeOf(c, q.tenant, "GET /v1/resources");
      const stored = await gw.store.getResourceIn(scope, c.req.param("type"), c.req.param("id"));
      if (!stored)
        throw new WritError("not_found", "no such resource in your tenant", {
          suggestedFix: "check the type and id, or create it with PUT first",
        });
      return c.json(stored);
    });
}
