/**
 * Approval requests:
 *
 *   GET  /v1/approvals              the ones the caller made or may decide (filter: status)
 *   GET  /v1/approvals/:id          one (its requester or an eligible approver); the requester
 *                                   collects the grant here once it is approved: minted on the
 *                                   first read (its TTL runs from then), the same grant after
 *   POST /v1/approvals/:id/approve  approve ({reason?}): the policy re-runs; answers {approval}
 *   POST /v1/approvals/:id/reject   reject ({reason}, required): answers {approval}
 *
 * Every one within the caller's tenant. A platform role (config `roles.platform`) may name another
 * tenant on the two reads (`?tenant=`), which lists or reads all of its requests, logged; deciding
 * stays with the tenant's own approvers.
 */
import { Hono } from "hono";
import { z } from "zod";
import { approvalView, approve, listApprovals, readApproval, reject } from "../../approvals/index.ts";
import { listTenantApprovals, readTenantApproval } from "../../approvals/read.ts";
import { WritError } from "../../core/errors.ts";
import type { Gateway } from "../../pipeline/index.ts";
import { approvalStatuses } from "../../store/types.ts";
import type { HttpEnv } from "../env.ts";
import { authenticate } from "../middleware/auth/index.ts";
import { EVERY_TENANT, routeScope, type ScopedContext } from "../middleware/auth/tenancy.ts";
import { jsonBody, parseWith } from "../request.ts";

const approvalQuerySchema = z
  .object({
    status: z.enum(approvalStatuses).optional(),
    tenant: z.string().min(1).max(200).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().optional(),
  })
  .strict();

const oneQuerySchema = z.object({ tenant: z.string().min(1).max(200).optional() }).strict();

const approveBodySchema = z.object({ reason: z.string().min(1).max(2000).optional() }).strict();
const rejectBodySchema = z.object({ reason: z.string().min(1).max(2000) }).strict();

/** An approver's decision body; an empty one is `{}` (a reason is optional when approving). */
const decisionBody = (req: Request) => jsonBody(req, { optional: true });

export function approvalRoutes(gw: Gateway, platformRoles: readonly string[] = []): Hono<HttpEnv> {
  const authenticated = authenticate(gw.identity);
  const scopeOf = routeScope(gw, platformRoles);
  /** The tenant a platform role named (logged), or undefined for the caller's own. */
  const otherTenant = async (
    c: ScopedContext,
    requested: string | undefined,
    surface: string,
  ): Promise<string | undefined> => {
    if (requested === EVERY_TENANT) {
      throw new WritError("invalid_argument", "approvals are read one tenant at a time", {
        fieldErrors: [{ path: "/tenant", message: "name one tenant" }],
        suggestedFix: "name the tenant whose approvals you want to read",
      });
    }
    const scope = await scopeOf(c, requested, surface);
    return "tenant" in scope && scope.tenant !== c.var.subject.tenant ? scope.tenant : undefined;
  };
  return new Hono<HttpEnv>()
    .get("/", authenticated, async (c) => {
      const subject = c.var.subject;
      const q = parseWith(approvalQuerySchema, c.req.query(), "", "the approval query");
      const filter = q.status ? { status: q.status } : {};
      const other = await otherTenant(c, q.tenant, "GET /v1/approvals");
      const page =
        other === undefined
          ? await listApprovals(gw, subject, filter, q.limit, q.cursor, c.var.requestId)
          : await listTenantApprovals(gw, other, filter, q.limit, q.cursor);
      return c.json({
        approvals: page.approvals.map((a) => approvalView(a, subject)),
        ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
      });
    })
    .get("/:id", authenticated, async (c) => {
      const q = parseWith(oneQuerySchema, c.req.query(), "", "the approval query");
      const other = await otherTenant(c, q.tenant, "GET /v1/approvals/:id");
      const a =
        other === undefined
          ? await readApproval(gw, c.req.param("id"), c.var.subject, c.var.requestId)
          : await readTenantApproval(gw, c.req.param("id"), other);
      return c.json(approvalView(a, c.var.subject));
    })
    .post("/:id/approve", authenticated, async (c) => {
      const body = parseWith(approveBodySchema, await decisionBody(c.req.raw), "", "the approval");
      const { subject, requestId } = c.var;
      const id = c.req.param("id");
      const { approval } = await approve(gw, id, subject, body.reason ?? null, requestId);
      return c.json({ approval: approvalView(approval, subject) });
    })
    .post("/:id/reject", authenticated, async (c) => {
      const body = parseWith(rejectBodySchema, await decisionBody(c.req.raw), "", "the rejection");
      const { subject, requestId } = c.var;
      const approval = await reject(gw, c.req.param("id"), subject, body.reason, requestId);
      return c.json({ approval: approvalView(approval, subject) });
    });
}
