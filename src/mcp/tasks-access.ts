/**
 * Who may read and change an MCP task (tasks.ts): the policy decides, as it decides a call. A
 * task is a policy resource of type `mcp.task` (`input.resource.owner` and `tenant` the subject
 * and tenant whose call it is, `attributes` its status and tool), and each request on it is a
 * built-in action, like Code Mode's `code.run` (not in the `tools:` registry, never proposed):
 * `mcp.tasks.get` (`tasks/get`), `mcp.tasks.update` (`tasks/update`), `mcp.tasks.cancel`
 * (`tasks/cancel`), with the arguments `{task_id}`. Each is decided and logged through
 * `decideAndLog`, as every decision is.
 *
 * A task is read in the caller's tenant only: another tenant's is, to this caller, a task that
 * does not exist (the policy sees `known: false`). Whatever the policy refuses, a task that does
 * not exist and one that is another's get the same answer (-32602, "not found or not yours"):
 * nothing tells a caller that someone else's task exists.
 */
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { toolContractSchema } from "../contracts/schema.ts";
import { jsonDigest } from "../core/digest.ts";
import { WritError } from "../core/errors.ts";
import type { ResourceContext } from "../core/types.ts";
import { canonicalAction } from "../normalize/index.ts";
import { allows } from "../pipeline/05-decide.ts";
import { decideAndLog } from "../pipeline/index.ts";
import type { McpTaskRecord } from "../store/types.ts";
import type { PostContext } from "./methods/context.ts";

/** The policy resource type of a task. */
export const TASK_RESOURCE_TYPE = "mcp.task";

/** What a request does to a task. */
export type TaskAccess = "get" | "update" | "cancel";

function taskContract(access: TaskAccess, description: string, sideEffect: "none" | "reversible") {
  return toolContractSchema.parse({
    name: `mcp.tasks.${access}`,
    version: "1",
    description,
    side_effect: sideEffect,
    idempotency: "natural",
    input_schema: {
      type: "object",
      additionalProperties: false,
      required: ["task_id"],
      properties: { task_id: { type: "string" } },
    },
    backend: { kind: "inprocess", handler: `mcp.tasks.${access}` },
  });
}

/** The built-in contracts of the requests on a task, by what they do. */
export const TASK_CONTRACTS = {
  get: taskContract("get", "Read an MCP task's status and, once it ended, its result (tasks/get).", "none"),
  update: taskContract(
    "update",
    "Answer the input requests of an MCP task waiting for input (tasks/update).",
    "reversible",
  ),
  cancel: taskContract("cancel", "Cancel an MCP task (tasks/cancel).", "reversible"),
} as const;

/** The task as the policy sees it. */
function resourceOf(taskId: string, task: McpTaskRecord | undefined): ResourceContext {
  if (task === undefined) return { type: TASK_RESOURCE_TYPE, id: taskId, known: false, attributes: {} };
  return {
    type: TASK_RESOURCE_TYPE,
    id: task.id,
    known: true,
    owner: task.owner,
    tenant: task.tenant,
    attributes: {
      status: task.status,
      tool: task.call.name,
      ...(task.approvalId === null ? {} : { approval_id: task.approvalId }),
    },
  };
}

/** The answer to a task that does not exist, has expired, or that the policy does not let this caller see. */
export function taskNotFound(taskId: string): ProtocolError {
  const error = new WritError("not_found", `task ${taskId} was not found, or it is not yours`, {
    suggestedFix:
      "use the taskId a tools/call answered you with, before the task's ttlMs runs out; a task is only its caller's",
  });
  return new ProtocolError(ProtocolErrorCode.InvalidParams, error.message, { error: error.toJSON() });
}

/**
 * The task `taskId` of the caller's tenant, once the policy let the caller `access` it (decided
 * and logged); throws `taskNotFound` when it does not exist or the policy refused, and a limit's
 * refusal (`rate_limited`) as it is.
 */
export async function authorizeTask(
  ctx: PostContext,
  access: TaskAccess,
  taskId: string,
): Promise<McpTaskRecord> {
  const task = await ctx.gw.store.getMcpTask(ctx.subject.tenant, taskId);
  const args = { task_id: taskId };
  const refusal = await decideAndLog<Error | undefined>(
    ctx.gw,
    {
      subject: ctx.subject,
      action: canonicalAction(TASK_CONTRACTS[access], args, jsonDigest(args)),
      resource: { type: TASK_RESOURCE_TYPE, id: taskId },
      known: resourceOf(taskId, task),
      context: { requestId: ctx.requestId, source: "mcp" },
      limits: "charge",
    },
    ({ evaluation }) => {
      const limited = evaluation.overruled?.error;
      // A limit's refusal as it is (only a call the policy allowed is charged); any other: not found.
      if (limited !== undefined) {
        return {
          value: new ProtocolError(-32000, `${limited.category}: ${limited.message}`, {
            error: limited.toJSON(),
          }),
        };
      }
      return { value: allows(evaluation.decision) ? undefined : taskNotFound(taskId) };
    },
  );
  if (refusal !== undefined) throw refusal;
  if (task === undefined) throw taskNotFound(taskId);
  return task;
}
