/**
 * The policy revisions Writ loaded (reviewer or admin role). Policies are the deployment's, not a
 * tenant's: every reviewer reads the same list.
 *
 *   GET /v1/policy/revisions      id, loaded_at, kind, origin, size, digest; newest first, paged
 *   GET /v1/policy/revisions/:id  one revision with its sources (a bundle: its Rego files, data,
 *                                 manifest and bytes)
 */
import { Hono } from "hono";
import { z } from "zod";
import { WritError } from "../../core/errors.ts";
import { revisionDocument } from "../../policy/index.ts";
import type { PolicyRevisionStore } from "../../store/types.ts";
import type { HttpEnv } from "../env.ts";
import { authenticate, type BearerVerifier, requireRole } from "../middleware/auth/index.ts";
import { parseWith } from "../request.ts";

const listQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().optional(),
  })
  .strict();

/** What the revision routes use of the gateway. */
export interface PolicyRevisionRoutesGateway {
  identity: BearerVerifier;
  store: Pick<PolicyRevisionStore, "listPolicyRevisions" | "getPolicyRevision">;
}

export function policyRevisionRoutes(
  gw: PolicyRevisionRoutesGateway,
  roles: readonly string[],
): Hono<HttpEnv> {
  const authenticated = authenticate(gw.identity);
  const reviewer = requireRole(roles, "reading policy revisions");
  return new Hono<HttpEnv>()
    .get("/", authenticated, reviewer, async (c) => {
      const q = parseWith(listQuerySchema, c.req.query(), "", "the revisions query");
      return c.json(await gw.store.listPolicyRevisions(q.limit, q.cursor));
    })
    .get("/:id", authenticated, reviewer, async (c) => {
      parseWith(z.object({}).strict(), c.req.query(), "", "the revision query");
      const record = await gw.store.getPolicyRevision(c.req.param("id"));
      if (!record) {
        throw new WritError("not_found", `no policy revision ${c.req.param("id")} is archived`, {
          suggestedFix:
            "list the archived revisions with GET /v1/policy/revisions (or writ policy revisions)",
        });
      }
      return c.json(await revisionDocument(record));
    });
}
