/**
 * The decision log (reviewer role):
 *
 *   GET /v1/decisions      entries, filtered and paged
 *   GET /v1/decisions/:id  one entry
 */
import { Hono } from "hono";
import { z } from "zod";
import { WritError } from "../../core/errors.ts";
import type { DecisionLog } from "../../decisionlog/index.ts";
import { toDecisionFilter } from "../../decisionlog/query.ts";
import type { HttpEnv } from "../env.ts";
import { authenticate, type BearerVerifier, requireRole } from "../middleware/auth/index.ts";
import { parseWith } from "../request.ts";

const decisionQuerySchema = z
  .object({
    subject: z.string().optional(),
    tenant: z.string().optional(),
    action: z.string().optional(),
    decision: z.enum(["allow", "deny", "require_approval", "allow_with_conditions", "error"]).optional(),
    reason: z.string().optional(),
    resource_type: z.string().optional(),
    resource_id: z.string().optional(),
    since: z.string().optional(),
    until: z.string().optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().optional(),
  })
  .strict();

/** What the decision routes use of the gateway. */
export interface DecisionRoutesGateway {
  identity: BearerVerifier;
  log: Pick<DecisionLog, "query" | "get">;
}

export function decisionRoutes(gw: DecisionRoutesGateway, reviewerRoles: readonly string[]): Hono<HttpEnv> {
  const authenticated = authenticate(gw.identity);
  const reviewer = requireRole(reviewerRoles, "reading the decision log");
  return new Hono<HttpEnv>()
    .get("/", authenticated, reviewer, async (c) => {
      const q = parseWith(decisionQuerySchema, c.req.query(), "", "the decision query");
      return c.json(await gw.log.query(toDecisionFilter(q), q.limit, q.cursor));
    })
    .get("/:id", authenticated, reviewer, async (c) => {
      const entry = await gw.log.get(c.req.param("id"));
      if (!entry) {
        throw new WritError("not_found", `no decision ${c.req.param("id")}`, {
          suggestedFix: "check the decision id",
        });
      }
      return c.json(entry);
    });
}
