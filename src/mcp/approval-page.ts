/**
 * What a caller is shown of an approval its call waits for, on 2026-07-28: a URL-mode elicitation
 * to the approval's page in Writ's console, with a message saying who may approve it and until
 * when. An approval round's `input_required` carries it (approval-flow.ts), and so does a task
 * waiting for the approval (tasks.ts).
 */
import { type InputRequest, inputRequired } from "@modelcontextprotocol/server";
import { CONSOLE_PATH } from "../console/session.ts";
import type { ApprovalView } from "../core/gateway.ts";
import type { CallContext } from "./methods/context.ts";
import { mcpResourceUrl } from "./resource-metadata.ts";

/** The key of the approval's elicitation in `inputRequests` (and of its answer in `inputResponses`). */
export const APPROVAL_INPUT_KEY = "writ_approval";

/** The approval's page in the console, at the gateway's public address (`mcp.resource`'s origin, else the request's). */
export function approvalPage(ctx: Pick<CallContext, "gw" | "requestUrl">, approvalId: string): string {
  const base = mcpResourceUrl(ctx.requestUrl, ctx.gw.identity.protectedResource);
  return new URL(`${CONSOLE_PATH}/approvals#approval-${encodeURIComponent(approvalId)}`, base).href;
}

/** The elicitation of an approval: its page to open, who may approve it and until when. */
export function approvalElicitation(
  ctx: Pick<CallContext, "gw" | "requestUrl">,
  approval: Pick<ApprovalView, "id" | "approver_roles" | "expires_at">,
): InputRequest {
  const roles =
    approval.approver_roles.length === 0 ? "(none: it can only expire)" : approval.approver_roles.join(", ");
  return inputRequired.elicitUrl({
    message: `Writ needs a person's approval before this call runs: ask someone with one of the roles ${roles} to approve request ${approval.id} on this page before ${approval.expires_at}. The call continues once it is decided.`,
    url: approvalPage(ctx, approval.id),
  });
}
