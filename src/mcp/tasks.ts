/**
 * The tasks extension (`io.modelcontextprotocol/tasks`) on the 2026-07-28 revision: a
 * `tools/call` from a client that declares the extension in its request's capabilities is
 * answered with a task (`resultType: "task"`) rather than the call's result, whenever the call
 * is not refused at once. The server decides, per the extension; Writ makes a task of:
 *
 * - a call the policy allows: it is decided as any call (logged, its limits charged, its grant
 *   minted), then run in the background on this instance, through `executeWithGrant` as
 *   `POST /v1/execute` runs a call; the task is `working` until its result is kept
 *   (`completed`, the tool's own failure and Writ's refusals at dispatch as the `CallToolResult`
 *   with `isError`, as the spec says) or a JSON-RPC error ends it (`failed`);
 * - a call waiting for approval: `input_required` with the approval's URL elicitation (its
 *   console page, approval-page.ts) when the client declares URL elicitation, else `working`
 *   with a status message naming the approval. Answering the elicitation (`tasks/update`,
 *   `accept`) leaves it `working` while the approval is pending; declining it ends the task with
 *   the `approval_required` refusal (the approval stays open). Once the approval is decided, the
 *   next `tasks/get` or `tasks/update` by the task's caller, on any instance, advances it: the
 *   task is claimed (one conditional statement: one instance wins), the grant collected and the
 *   call run once in the background through `answerApproved` (the path of every approved call);
 *   rejected or expired, the task completes with the structured refusal (`isError`).
 *
 * A call refused at once (denied, over a limit, invalid, an unknown tool) is answered as today,
 * not as a task. Tasks are rows of the store (store/mcp-tasks.ts), bound to the caller's tenant
 * and subject, so every instance answers `tasks/get` alike; each request on a task is decided by
 * the policy and logged (tasks-access.ts). `tasks/cancel` cancels a running call where it runs
 * (here, or through the store's cancellations on the instance running it: cancellation.ts) and
 * the task is `cancelled`; a result arriving after that is not kept.
 */
import { randomUUID } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  CLIENT_CAPABILITIES_META_KEY,
  type InputRequests,
  inputResponse,
  ProtocolError,
} from "@modelcontextprotocol/server";
import { readApproval } from "../approvals/index.ts";
import type { CallObserver } from "../core/handlers.ts";
import { isRecord } from "../core/json.ts";
import { nowOf } from "../pipeline/06-approval.ts";
import type {
  ApprovalRecord,
  McpTaskCall,
  McpTaskChange,
  McpTaskRecord,
  NewMcpTask,
} from "../store/types.ts";
import { TERMINAL_TASK_STATUSES } from "../store/types.ts";
import { asErrorBody, fromOutcome, toolError } from "./answers.ts";
import { APPROVAL_INPUT_KEY, approvalElicitation } from "./approval-page.ts";
import { answerApproved, answerRun, type ProposedMessage, runGranted } from "./methods/approved.ts";
import type { CallContext } from "./methods/context.ts";
import { proposeCall } from "./methods/proposed.ts";

/** The extension's identifier (capabilities, `-32021`). */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
/** How long a task is kept after it was created (at least this long past its approval's expiry). */
const TASK_TTL_MS = 60 * 60_000;
/** The polling interval a task suggests. */
const POLL_INTERVAL_MS = 1_000;

/**
 * Whether a request's `_meta` envelope declares the tasks extension (its client capabilities'
 * `extensions` name it with an object). Read with type guards: a zod schema would answer the same
 * with a failing parse, and its error, for every request that does not declare it.
 */
export function declaresTasks(envelope: unknown): boolean {
  const capabilities = isRecord(envelope) ? envelope[CLIENT_CAPABILITIES_META_KEY] : undefined;
  const extensions = isRecord(capabilities) ? capabilities.extensions : undefined;
  return isRecord(extensions) && isRecord(extensions[TASKS_EXTENSION]);
}

/** A `CreateTaskResult`: the task, as a `tools/call` answers it. */
export type CreateTaskResult = CallToolResult & { resultType: "task"; taskId: string };

/** The task as the extension shows it (`Task`, with its status's payload). */
export function taskFields(task: McpTaskRecord, inputRequests?: InputRequests): Record<string, unknown> {
  return {
    taskId: task.id,
    status: task.status,
    ...(task.statusMessage === null ? {} : { statusMessage: task.statusMessage }),
    createdAt: task.createdAt.toISOString(),
    lastUpdatedAt: task.updatedAt.toISOString(),
    ttlMs: task.expiresAt.getTime() - task.createdAt.getTime(),
    pollIntervalMs: POLL_INTERVAL_MS,
    ...(task.status === "completed" && task.result !== null ? { result: task.result } : {}),
    ...(task.status === "failed" && task.error !== null ? { error: task.error } : {}),
    ...(task.status === "input_required" ? { inputRequests: inputRequests ?? {} } : {}),
  };
}

function created(task: McpTaskRecord): CreateTaskResult {
  // The v2 server wants `content` on every tools/call result; `withoutTaskContent` drops it.
  return { content: [], ...taskFields(task), resultType: "task", taskId: task.id };
}

/**
 * A message on its way out (initialize.ts): a `CreateTaskResult` without the `content` the v2
 * server gives every `tools/call` result (a task is `Result & Task`); any other as it is.
 */
export function withoutTaskContent<M extends object>(message: M): M {
  if (!("result" in message) || !isRecord(message.result) || message.result.resultType !== "task")
    return message;
  const { content: _content, ...task } = message.result;
  return Object.assign({}, message, { result: task });
}

function messageOf(call: McpTaskCall): ProposedMessage {
  return { method: "tools/call", params: { name: call.name, arguments: call.arguments } };
}

const isOwner = (ctx: CallContext, task: McpTaskRecord) =>
  task.owner === ctx.subject.id && task.tenant === ctx.subject.tenant;

/** The key a running task's call is cancellable by (cancellation.ts). */
const cancelKey = (taskId: string) => `task:${taskId}`;

function waitingMessage(approval: Pick<ApprovalRecord, "id" | "approver_roles" | "expires_at">): string {
  const roles = approval.approver_roles.join(", ") || "(none)";
  return `waiting for approval ${approval.id} by one of the roles ${roles}, until ${approval.expires_at}`;
}

/**
 * A `tools/call` from a client declaring the tasks extension (approval-flow.ts's rounds hand it
 * here): decided now; a task when it is allowed or waits for approval, else today's answer.
 */
export async function callAsTask(
  ctx: CallContext,
  params: { name: string; arguments?: Record<string, unknown> | undefined },
  jsonRpcId: string | number,
  elicitsUrl: boolean,
): Promise<CallToolResult> {
  const call: McpTaskCall = { name: params.name, arguments: params.arguments ?? {} };
  const outcome = await proposeCall(ctx, params, jsonRpcId, false);
  const approval = outcome.approval;
  if (outcome.error?.category === "approval_required" && approval !== undefined) {
    if (approval.status === "approved") {
      // Approved already (the same call proposed again before its grant was collected): run it.
      const task = await createTask(ctx, call, { status: "working", approvalId: approval.id, claimed: true });
      runInBackground(ctx, task, (run) => answerApproved(run, messageOf(call), approval.id));
      return created(task);
    }
    const waiting = elicitsUrl
      ? { status: "input_required" as const, inputKey: APPROVAL_INPUT_KEY }
      : { status: "working" as const, statusMessage: waitingMessage(approval) };
    const expiresAt = new Date(approval.expires_at);
    return created(await createTask(ctx, call, { ...waiting, approvalId: approval.id, expiresAt }));
  }
  const grant = outcome.grant;
  if (outcome.error !== undefined || grant === undefined) return fromOutcome(outcome);
  // Run with the arguments the grant is bound to (the conditions' overrides applied).
  const granted: McpTaskCall = { name: call.name, arguments: grant.arguments };
  const task = await createTask(ctx, call, { status: "working", claimed: true });
  runInBackground(ctx, task, (run) =>
    answerRun(runGranted(run, messageOf(granted), grant.token, outcome.decision_id)),
  );
  return created(task);
}

interface TaskStart {
  status: "working" | "input_required";
  statusMessage?: string;
  approvalId?: string;
  inputKey?: string;
  /** Run by this request from the start. */
  claimed?: boolean;
  /** When its approval expires: the task is kept `TASK_TTL_MS` past it. */
  expiresAt?: Date;
}

/** Records a new task of the caller's (durably, before it is answered: the extension says so). */
async function createTask(ctx: CallContext, call: McpTaskCall, start: TaskStart): Promise<McpTaskRecord> {
  const now = nowOf(ctx.gw);
  const expiresAt = new Date(Math.max(now.getTime(), start.expiresAt?.getTime() ?? 0) + TASK_TTL_MS);
  const task: NewMcpTask = {
    id: randomUUID(),
    tenant: ctx.subject.tenant,
    owner: ctx.subject.id,
    status: start.status,
    statusMessage: start.statusMessage ?? null,
    call,
    approvalId: start.approvalId ?? null,
    inputKey: start.inputKey ?? null,
    runner: start.claimed === true ? ctx.requestId : null,
    createdAt: now,
    expiresAt,
  };
  await ctx.gw.store.createMcpTask(task);
  return { ...task, updatedAt: now, result: null, error: null };
}

/** The task's end once its run settled: its result, or the JSON-RPC error that ended it. */
function ending(settled: { result: CallToolResult } | { error: unknown }): McpTaskChange {
  if ("result" in settled) return { status: "completed", statusMessage: null, result: settled.result };
  const error = settled.error;
  const body = asErrorBody(error);
  // A JSON-RPC error (the SDKs' errors carry their code): the task failed with it.
  if (error instanceof Error && "code" in error && typeof error.code === "number") {
    const data = error instanceof ProtocolError && error.data !== undefined ? error.data : body;
    return {
      status: "failed",
      statusMessage: error.message,
      error: { code: error.code, message: error.message, data },
    };
  }
  // Writ's own failures are tool execution errors, as callToolRound answers them.
  return { status: "completed", statusMessage: null, result: toolError(body, {}) };
}

/**
 * Runs the task's call on this instance, off the request that started it (its result kept when
 * it ends, unless the task was cancelled meanwhile); `tasks/cancel` aborts it.
 */
function runInBackground(
  ctx: CallContext,
  task: McpTaskRecord,
  run: (ctx: CallContext) => Promise<CallToolResult>,
): void {
  const controller = new AbortController();
  const observer: CallObserver = { signal: controller.signal };
  const forget = ctx.cancellable.add(ctx.subject, cancelKey(task.id), () => controller.abort());
  const runner = ctx.requestId;
  void run({ ...ctx, observer })
    .then(
      (result) => ending({ result }),
      (error: unknown) => ending({ error }),
    )
    .then((change) => ctx.gw.store.updateMcpTask(task.tenant, task.id, { from: ["working"], runner }, change))
    .catch((error: unknown) =>
      console.error(`mcp: keeping task ${task.id}'s result failed: ${String(error)}`),
    )
    .finally(forget);
}

/**
 * The task as its caller advances it: a task whose approval was decided is claimed (by one
 * instance) and its call run once, or ended with the refusal. Returns the task as it is now and
 * the approval (its elicitation is the task's input request while it waits).
 */
async function advance(
  ctx: CallContext,
  task: McpTaskRecord,
): Promise<{ task: McpTaskRecord; approval: ApprovalRecord | undefined }> {
  if (task.approvalId === null || TERMINAL_TASK_STATUSES.includes(task.status))
    return { task, approval: undefined };
  if (!isOwner(ctx, task)) return { task, approval: await ctx.gw.store.getApproval(task.approvalId) };
  const approval = await readApproval(ctx.gw, task.approvalId, ctx.subject, ctx.requestId);
  if (approval.status === "pending" || task.runner !== null) return { task, approval };
  const claimed = await ctx.gw.store.updateMcpTask(
    task.tenant,
    task.id,
    { from: ["working", "input_required"], unclaimed: true },
    {
      status: "working",
      statusMessage: `approval ${approval.status}`,
      inputKey: null,
      runner: ctx.requestId,
    },
  );
  if (claimed && approval.status === "approved") {
    runInBackground(ctx, task, (run) => answerApproved(run, messageOf(task.call), approval));
  } else if (claimed) {
    // Rejected or expired: nothing runs; the refusal is the task's result now.
    const result = await answerApproved({ ...ctx, observer: {} }, messageOf(task.call), approval);
    await ctx.gw.store.updateMcpTask(
      task.tenant,
      task.id,
      { from: ["working"], runner: ctx.requestId },
      ending({ result }),
    );
  }
  return { task: (await ctx.gw.store.getMcpTask(task.tenant, task.id)) ?? task, approval };
}

/** `tasks/get`: the task as it stands (advanced first, when its caller asks). */
export async function getTask(ctx: CallContext, task: McpTaskRecord): Promise<Record<string, unknown>> {
  const now = await advance(ctx, task);
  const inputRequests =
    now.task.status === "input_required" && now.task.inputKey !== null && now.approval !== undefined
      ? { [now.task.inputKey]: approvalElicitation(ctx, now.approval) }
      : undefined;
  return taskFields(now.task, inputRequests);
}

/**
 * `tasks/update`: the answer to the approval's elicitation. Accepted: the task waits, `working`;
 * declined or cancelled: it ends with the `approval_required` refusal (the approval stays open).
 * Answers to keys not outstanding are ignored, as the extension says.
 */
export async function updateTask(
  ctx: CallContext,
  task: McpTaskRecord,
  inputResponses: Record<string, unknown>,
): Promise<void> {
  const key = task.inputKey;
  if (task.status !== "input_required" || key === null || !(key in inputResponses)) return;
  const answer = inputResponse(inputResponses, key);
  const when = { from: ["input_required" as const], unclaimed: true };
  if (answer.kind === "elicit" && answer.action === "accept") {
    const approval = task.approvalId === null ? undefined : await ctx.gw.store.getApproval(task.approvalId);
    const statusMessage = approval === undefined ? null : waitingMessage(approval);
    await ctx.gw.store.updateMcpTask(task.tenant, task.id, when, {
      status: "working",
      statusMessage,
      inputKey: null,
    });
  } else if (task.approvalId !== null && isOwner(ctx, task)) {
    const result = await answerApproved({ ...ctx, observer: {} }, messageOf(task.call), task.approvalId);
    await ctx.gw.store.updateMcpTask(task.tenant, task.id, when, { ...ending({ result }), inputKey: null });
  }
}

/** `tasks/cancel`: the task `cancelled` (unless it ended already) and its running call cancelled. */
export async function cancelTask(ctx: CallContext, task: McpTaskRecord): Promise<void> {
  const cancelled = await ctx.gw.store.updateMcpTask(
    task.tenant,
    task.id,
    { from: ["working", "input_required"] },
    { status: "cancelled", statusMessage: "cancelled by its caller", inputKey: null },
  );
  if (!cancelled || task.runner === null) return;
  const owner = { ...ctx.subject, id: task.owner, tenant: task.tenant };
  await ctx.cancellable.cancel(owner, cancelKey(task.id), "the task was cancelled");
}
