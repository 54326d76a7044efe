/**
 * A call that needed approval, run with the grant the approval released, through
 * `executeWithGrant`, as `POST /v1/execute` runs one: a repeated request naming the approval
 * (`_meta["writ/approval"]`, either revision), or a 2026-07-28 retry carrying the `requestState`
 * of its approval round (../approval-flow.ts).
 */
import { type CallToolResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { readApproval } from "../../approvals/index.ts";
import { WritError, type WritErrorBody } from "../../core/errors.ts";
import { executeWithGrant, type LayeredResult } from "../../pipeline/index.ts";
import { ToolFailedError } from "../../results/index.ts";
import type { ApprovalRecord } from "../../store/types.ts";
import { success, toolError, toolFailure } from "../answers.ts";
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
 * A call naming an approved request (by id, or as its requester just read it with `readApproval`):
 * it runs with the grant the approval released. Throws `Refused` when the approval is not the
 * caller's or not approved; a grant already spent is refused at dispatch (single use).
 */
export async function runApproved(
  ctx: CallContext,
  message: ProposedMessage,
  approvalOrId: string | ApprovalRecord,
): Promise<{ result: LayeredResult; decisionId: string | undefined }> {
  const approval =
    typeof approvalOrId === "string"
      ? await readApproval(ctx.gw, approvalOrId, ctx.subject, ctx.requestId)
      : approvalOrId;
  const approvalId = approval.id;
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
  return runGranted(ctx, message, approval.grant.token, approval.decision_id);
}

/**
 * A call run with the grant its decision released (an approval's, or an allowed call's that a
 * task runs later: ../tasks.ts), through `executeWithGrant`, as `POST /v1/execute` runs one.
 */
export async function runGranted(
  ctx: CallContext,
  message: ProposedMessage,
  grant: string,
  decisionId: string | undefined,
): Promise<{ result: LayeredResult; decisionId: string | undefined }> {
  const { result } = await executeWithGrant(ctx.gw, {
    authorization: ctx.authorization,
    subject: ctx.subject,
    observer: ctx.observer,
    grant,
    format: "mcp",
    call: { jsonrpc: "2.0", id: ctx.requestId, ...message },
    requestId: ctx.requestId,
  });
  return { result, decisionId };
}

/**
 * `runApproved` for a `tools/call`, as MCP answers it: the result, the tool's own failure, or the
 * refusal as a tool execution error (Writ's other errors are thrown, for the caller to answer).
 */
export function answerApproved(
  ctx: CallContext,
  message: ProposedMessage,
  approvalOrId: string | ApprovalRecord,
): Promise<CallToolResult> {
  return answerRun(runApproved(ctx, message, approvalOrId));
}

/**
 * A run (`runApproved`, `runGranted`) as MCP answers a `tools/call`: the result, the tool's own
 * failure, or the refusal as a tool execution error (Writ's other errors are thrown).
 */
export function answerRun(
  run: Promise<{ result: LayeredResult; decisionId: string | undefined }>,
): Promise<CallToolResult> {
  return run.then(
    ({ result, decisionId }) => success(result, decisionId),
    (error: unknown) => {
      if (error instanceof ToolFailedError) return toolFailure(error.toJSON(), error.result, undefined);
      if (error instanceof Refused) return toolError(error.error, error.extra);
      throw error;
    },
  );
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
