/**
 * The decision log (reviewer role), the caller's tenant's entries only:
 *
 *   GET /v1/decisions      entries, filtered and paged (`tenant`: a platform role may name another, or `*`;
 *                          `run`: a Code Mode run's own entry and its calls' entries)
 *   GET /v1/decisions/:id  one entry (another tenant's: 404 as if absent; `?tenant=` as above)
 */
import { Hono } from "hono";
import { z } from "zod";
import { WritError } from "../../core/errors.ts";
import type { AuditLog } from "../../decisionlog/index.ts";
import { toDecisionFilter } from "../../decisionlog/query.ts";
import type { HttpEnv } from "../env.ts";
import { authenticate, type BearerVerifier, requireRole } from "../middleware/auth/index.ts";
import { routeScope, type ScopeLog } from "../middleware/auth/tenancy.ts";
import { parseWith } from "../request.ts";

const decisionQuerySchema = z
  .object({
    subject: z.string().optional(),
    tenant: z.string().min(1).max(200).optional(),
    action: z.string().optional(),
    decision: z.enum(["allow", "deny", "require_approval", "allow_with_conditions", "error"]).optional(),
    reason: z.string().optional(),
    resource_type: z.string().optional(),
    resource_id: z.string().optional(),
    path: z.string().optional(),
    run: z.string().optional(),
    since: z.string().optional(),
    until: z.string().optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().optional(),
  })
  .strict();

const oneQuerySchema = z.object({ tenant: z.string().min(1).max(200).optional() }).strict();

/** What the decision routes use of the gateway. */
export interface DecisionRoutesGateway {
  identity: BearerVerifier;
  log: Pick<AuditLog, "queryIn" | "getIn"> & ScopeLog;
  policy: { readonly revision: string | undefined };
}

export function decisionRoutes(
  gw: DecisionRoutesGateway,
  reviewerRoles: readonly string[],
  platformRoles: readonly string[] = [],
): Hono<HttpEnv> {
  const authenticated = authenticate(gw.identity);
  const reviewer = requireRole(reviewerRoles, "reading the decision log");
  const scopeOf = routeScope(gw, platformRoles);
  return new Hono<HttpEnv>()
    .get("/", authenticated, reviewer, async (c) => {
      const q = parseWith(decisionQuerySchema, c.req.query(), "", "the decision query");
      const scope = await scopeOf(c, q.tenant, "GET /v1/decisions");
      // The scope bounds the filter; within it, `tenant` filters nothing further.
      const { tenant: _, ...filter } = toDecisionFilter(q);
      return c.json(await gw.log.queryIn(scope, filter, q.limit, q.cursor));
    })
    .get("/:id", authenticated, reviewer, async (c) => {
      const q = parseWith(oneQuerySchema, c.req.query(), "", "the decision query");
      const scope = await scopeOf(c, q.tenant, "GET /v1/decisions/:id");
      const entry = await gw.log.getIn(scope, c.req.param("id"));
      if (!entry) {
        throw new WritError("not_found", `no decision ${c.req.param("id")}`, {
          suggestedFix: "check the decision id",
        });
      }
      return c.json(entry);
    });
}
