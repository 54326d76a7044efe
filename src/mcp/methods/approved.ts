/**
 * A repeated request naming an approval (`_meta["writ/approval"]`): the call runs with the grant
 * the approval released, through `executeWithGrant`, as `POST /v1/execute` runs one.
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { readApproval } from "../../approvals/index.ts";
import { WritError, type WritErrorBody } from "../../core/errors.ts";
import { executeWithGrant, type LayeredResult } from "../../pipeline/index.ts";
import { APPROVAL_META_KEY } from "../config.ts";
import type { CallContext } from "./context.ts";

/** A call refused before it ran, with what the caller may need besides the error. */
export class Refused extends Error {
  constructor(
    readonly error: WritErrorBody,
    readonly extra: Record<string, unknown>,
  ) {
    super(error.message);
  }
}

/** An MCP request proposing a call, as the MCP intake format reads it. */
export interface ProposedMessage {
  method: "tools/call" | "resources/read" | "prompts/get";
  params: Record<string, unknown>;
}

/**
 * A repeated request naming an approved request: it runs with the grant the approval released.
 * Throws `Refused` when the approval is not the caller's or not approved.
 */
export async function runApproved(
  ctx: CallContext,
  message: ProposedMessage,
  approvalId: string,
): Promise<{ result: LayeredResult; decisionId: string | undefined }> {
  const approval = await readApproval(ctx.gw, approvalId, ctx.subject, ctx.requestId);
  const mine = approval.requester.id === ctx.subject.id && approval.requester.tenant === ctx.subject.tenant;
  if (!mine) {
    throw new Refused(
      new WritError("forbidden", `approval ${approvalId} was requested by someone else`, {
        suggestedFix: "only the requester runs an approved call; propose the call yourself",
      }).toJSON(),
      {},
    );
  }
  if (approval.status !== "approved" || !approval.grant) {
    const category =
      approval.status === "pending"
        ? "approval_required"
        : approval.status === "expired"
          ? "approval_expired"
          : approval.resolution === "stale_revision"
            ? "stale_revision"
            : "policy_denied";
    throw new Refused(
      new WritError(
        category,
        `approval ${approvalId} is ${approval.status}${approval.resolution ? ` (${approval.resolution})` : ""}`,
        {
          suggestedFix:
            approval.status === "pending"
              ? `wait until someone with one of the roles ${approval.approver_roles.join(", ")} decides it, then call again`
              : "propose the call again without the approval id",
        },
      ).toJSON(),
      { approval: { id: approval.id, status: approval.status } },
    );
  }
  const { result } = await executeWithGrant(ctx.gw, {
    authorization: ctx.authorization,
    subject: ctx.subject,
    observer: ctx.observer,
    grant: approval.grant.token,
    format: "mcp",
    call: { jsonrpc: "2.0", id: ctx.requestId, ...message },
    requestId: ctx.requestId,
  });
  return { result, decisionId: approval.decision_id };
}

/** The approval a repeated request names in `_meta["writ/approval"]`, if any. */
export function approvalOf(meta: Record<string, unknown> | undefined): string | undefined {
  const approvalId = meta?.[APPROVAL_META_KEY];
  if (approvalId === undefined) return undefined;
  if (typeof approvalId !== "string" || approvalId === "") {
    throw new McpError(
      ErrorCode.InvalidParams,
      `_meta["${APPROVAL_META_KEY}"] must be an approval id (a string)`,
    );
  }
  return approvalId;
}
