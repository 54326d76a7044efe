/**
 * Writ's outcomes as MCP answers: a `tools/call` result (content, `structuredContent`, Writ's part
 * under `_meta["writ/result"]`), a refusal as a tool execution error (`isError`, the structured
 * error in `structuredContent`), a pending approval's error saying how to repeat the call.
 */
import {
  type CallToolResult,
  type ContentBlock,
  ErrorCode,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { WritError, type WritErrorBody } from "../core/errors.ts";
import type { CallOutcome, LayeredResult } from "../pipeline/index.ts";
import { APPROVAL_META_KEY, ERROR_META_KEY, RESULT_META_KEY } from "./config.ts";

export function toolError(
  error: WritErrorBody,
  extra: {
    decision?: CallOutcome["decision"];
    decision_id?: string;
    reasons?: CallOutcome["reasons"];
    approval?: unknown;
  },
): CallToolResult {
  return {
    isError: true,
    content: [
      { type: "text", text: `${error.category}: ${error.message}\nwhat to do: ${error.suggested_fix}` },
    ],
    structuredContent: { error, ...extra },
  };
}

/** Writ's part of an answer: provenance, redactions and the decision, under `_meta["writ/result"]`. */
export function resultMeta(result: LayeredResult, decisionId: string | undefined): Record<string, unknown> {
  return {
    [RESULT_META_KEY]: {
      summary: result.summary,
      provenance: result.provenance,
      execution_meta: result.execution_meta,
      ...(result.redacted === undefined ? {} : { redacted: result.redacted }),
      ...(decisionId === undefined ? {} : { decision_id: decisionId }),
    },
  };
}

/**
 * A result as MCP content. An MCP server's content items pass as it sent them (redacted), with
 * its `structuredContent` when it sent one; a result withheld whole says so in a text item. A
 * result of any other backend is its structured content, serialized in a text item too.
 */
export function success(result: LayeredResult, decisionId: string | undefined): CallToolResult {
  const meta = resultMeta(result, decisionId);
  if (result.content === undefined) {
    return {
      content: [{ type: "text", text: JSON.stringify(result.structured_content) }],
      structuredContent: result.structured_content,
      _meta: meta,
    };
  }
  const withheld = (result.redacted ?? []).find((r) => r.startsWith("classification:"));
  const content: ContentBlock[] =
    withheld !== undefined && result.content.length === 0
      ? [{ type: "text", text: `(withheld: the result's ${withheld.replace(":", " is ")})` }]
      : result.content;
  return {
    content,
    ...(Object.keys(result.structured_content).length === 0
      ? {}
      : { structuredContent: result.structured_content }),
    _meta: meta,
  };
}

/** A tool that reported its own failure: its content as it sent it, Writ's error in `_meta`. */
export function toolFailure(
  error: WritErrorBody,
  result: LayeredResult,
  decisionId: string | undefined,
): CallToolResult {
  return {
    ...success(result, decisionId),
    isError: true,
    _meta: { ...resultMeta(result, decisionId), [ERROR_META_KEY]: error },
  };
}

export function decisionOf(outcome: CallOutcome): Record<string, unknown> {
  return { decision: outcome.decision, decision_id: outcome.decision_id, reasons: outcome.reasons };
}

/** A refusal's error; one waiting for approval says how to repeat the request once approved. */
export function explained(error: WritErrorBody, outcome: CallOutcome, what: string): WritErrorBody {
  const approval = outcome.approval;
  if (error.category !== "approval_required" || approval === undefined) return error;
  const repeat = `${what} again with the same arguments and _meta {"${APPROVAL_META_KEY}": "${approval.id}"}`;
  return {
    ...error,
    suggested_fix:
      approval.status === "approved"
        ? `${approval.id} is approved: ${repeat}`
        : `ask someone with one of the roles ${approval.approver_roles.join(", ")} to approve ${approval.id}; then ${repeat}`,
  };
}

/** An allowed call that ran and answered nothing: Writ's own failure. */
export function noResult(what: string): WritErrorBody {
  return new WritError("internal", `the ${what} was allowed but produced no result`, {
    suggestedFix: "retry later; if it persists, report the decision id to the operator",
  }).toJSON();
}

export function fromOutcome(outcome: CallOutcome): CallToolResult {
  const decision = decisionOf(outcome);
  if (outcome.error) {
    if (outcome.error.category === "unknown_tool") {
      throw new McpError(ErrorCode.InvalidParams, outcome.error.message, {
        error: outcome.error,
        ...decision,
      });
    }
    const error = explained(outcome.error, outcome, "call this tool");
    if (outcome.error.category === "tool_error" && outcome.result) {
      return toolFailure(outcome.error, outcome.result, outcome.decision_id);
    }
    return toolError(error, { ...decision, ...(outcome.approval ? { approval: outcome.approval } : {}) });
  }
  if (!outcome.result) {
    return toolError(noResult("call"), decision);
  }
  return success(outcome.result, outcome.decision_id);
}

export function asErrorBody(error: unknown): WritErrorBody {
  return WritError.from(error, {
    message: "Writ failed while handling the call",
    suggestedFix: "retry later; if it persists, tell the operator the time of the request",
  }).toJSON();
}
