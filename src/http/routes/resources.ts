/**
 * Resources and their owners, the policy's context (admin role):
 *
 *   PUT /v1/resources/:type/:id  create or replace
 *   GET /v1/resources/:type/:id  read
 */
import { Hono } from "hono";
import { z } from "zod";
import { WritError } from "../../core/errors.ts";
import type { Store } from "../../store/types.ts";
import type { HttpEnv } from "../env.ts";
import { authenticate, type BearerVerifier, requireRole } from "../middleware/auth/index.ts";
import { jsonBody, parseWith } from "../request.ts";

const resourceBodySchema = z
  .object({
    owner: z.string().min(1),
    tenant: z.string().min(1).default("default"),
    attributes: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

/** What the resource routes use of the gateway. */
export interface ResourceRoutesGateway {
  identity: BearerVerifier;
  store: Pick<Store, "putResource" | "getResource">;
}

export function resourceRoutes(gw: ResourceRoutesGateway, adminRoles: readonly string[]): Hono<HttpEnv> {
  const authenticated = authenticate(gw.identity);
  return new Hono<HttpEnv>()
    .put("/:type/:id", authenticated, requireRole(adminRoles, "writing resources"), async (c) => {
      const body = parseWith(resourceBodySchema, await jsonBody(c.req.raw), "", "the resource");
      const stored = await gw.store.putResource({
        type: c.req.param("type"),
        id: c.req.param("id"),
        ...body,
      });
      return c.json(stored);
    })
    .get("/:type/:id", authenticated, requireRole(adminRoles, "reading resources"), async (c) => {
      const stored = await gw.store.getResource(c.req.param("type"), c.req.param("id"));
      if (!stored)
        throw new WritError("not_found", "no such resource", { suggestedFix: "create it with PUT first" });
      return c.json(stored);
    });
}
