/** The approvers' queue and their approve and reject forms. */
import type { Context, Hono } from "hono";
import { z } from "zod";
import { approve, isEligibleApprover, listApprovals, reject } from "../../approvals/index.ts";
import { ApprovalsPage } from "../approvals.tsx";
import { sendPage } from "../layout.tsx";
import { CONSOLE_PATH, type ConsoleEnv, checkCsrfToken, requireAbility, type Viewer } from "../session.ts";
import { type ConsoleContext, formOf, idSchema, parseExternal, requestIdOf } from "./context.ts";

/** Pending requests per page of the approvals queue (oldest pages follow the link at its end). */
const APPROVALS_PER_PAGE = 50;

const csrfFormSchema = z.object({ csrf: z.string().optional() });
const approveFormSchema = csrfFormSchema.extend({
  reason: z
    .string()
    .max(2000)
    .optional()
    .transform((r) => (r?.trim() ? r.trim() : null)),
});
const rejectFormSchema = csrfFormSchema.extend({
  reason: z
    .string()
    .max(2000)
    .transform((r) => r.trim())
    .pipe(z.string().min(1, "say why you reject the request")),
});
const decidedQuerySchema = z
  .object({
    decided: z.string().max(200),
    outcome: z.enum(["approved", "rejected"]),
    cursor: z.string().max(500),
  })
  .partial()
  .strict();

function decidedPage(id: string, outcome: "approved" | "rejected"): string {
  return `${CONSOLE_PATH}/approvals?${new URLSearchParams({ decided: id, outcome })}`;
}

/** The approver, the approval id and the form, once the role and the anti-forgery token check out. */
async function approvalForm<T extends z.ZodType>(
  ctx: ConsoleContext,
  c: Context<ConsoleEnv>,
  schema: T,
  what: string,
) {
  const viewer = c.get("viewer");
  requireAbility(viewer, "approve", ctx.roles);
  const id = parseExternal(idSchema, c.req.param("id"), "the approval id");
  const form = await formOf(c);
  checkCsrfToken(viewer, form.csrf);
  return { viewer, id, form: parseExternal(schema, form, what), requestId: requestIdOf(c) };
}

export function approvalRoutes(app: Hono<ConsoleEnv>, ctx: ConsoleContext): void {
  const { gw, roles } = ctx;

  app.get("/approvals", async (c) => {
    const viewer = c.get("viewer");
    requireAbility(viewer, "approve", roles);
    const notice = parseExternal(decidedQuerySchema, c.req.query(), "the page address");
    const page = await listApprovals(
      gw,
      viewer.subject,
      { status: "pending" },
      APPROVALS_PER_PAGE,
      notice.cursor,
      requestIdOf(c),
    );
    const decidable = page.approvals.filter((a) => isEligibleApprover(viewer.subject, a));
    const pending = await Promise.all(
      decidable.map(async (approval) => ({
        approval,
        entry: await gw.log.getIn({ tenant: viewer.subject.tenant }, approval.decision_id),
      })),
    );
    const decided =
      notice.decided !== undefined && notice.outcome !== undefined
        ? { id: notice.decided, outcome: notice.outcome }
        : undefined;
    return sendPage(
      c,
      <ApprovalsPage viewer={viewer} pending={pending} decided={decided} nextCursor={page.next_cursor} />,
    );
  });

  /** An approver's answer: the form checked, the approval decided, the queue shown with a notice. */
  const answer = <T extends z.ZodType>(
    outcome: "approved" | "rejected",
    schema: T,
    what: string,
    act: (a: { viewer: Viewer; id: string; form: z.output<T>; requestId: string }) => Promise<unknown>,
  ) =>
    app.post(`/approvals/:id/${outcome === "approved" ? "approve" : "reject"}`, async (c) => {
      const checked = await approvalForm(ctx, c, schema, what);
      await act(checked);
      return c.redirect(decidedPage(checked.id, outcome), 303);
    });
  answer("approved", approveFormSchema, "the approval form", ({ viewer, id, form, requestId }) =>
    approve(gw, id, viewer.subject, form.reason, requestId),
  );
  answer("rejected", rejectFormSchema, "the rejection form", ({ viewer, id, form, requestId }) =>
    reject(gw, id, viewer.subject, form.reason, requestId),
  );
}
