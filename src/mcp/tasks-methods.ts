/**
 * The tasks extension's methods on a 2026-07-28 request's server (modern.ts registers them beside
 * methods/index.ts's, and declares the extension in `server/discover`'s capabilities):
 * `tasks/get`, `tasks/update` and `tasks/cancel` (the extension has no `tasks/list` and no
 * `tasks/result`: a task's result is in its `tasks/get`). Each needs the extension declared in
 * the request's capabilities (-32021 otherwise, as the extension says), is decided by the policy
 * on the task and logged (tasks-access.ts), then answered by tasks.ts. The SDK checks `Mcp-Name`
 * against `params.taskId`.
 */
import { ProtocolError, ProtocolErrorCode, type ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { ModernPost } from "./methods/context.ts";
import { cancelTask, declaresTasks, getTask, TASKS_EXTENSION, updateTask } from "./tasks.ts";
import { authorizeTask, type TaskAccess } from "./tasks-access.ts";

const taskIdSchema = z.string().min(1).max(256);
const getParams = z.looseObject({ taskId: taskIdSchema });

/** The task a request names, once the request may reach it: the extension declared, the policy's allow. */
async function taskFor(post: ModernPost, ctx: ServerContext, access: TaskAccess, taskId: string) {
  if (!declaresTasks(ctx.mcpReq.envelope)) {
    throw new ProtocolError(
      ProtocolErrorCode.MissingRequiredClientCapability,
      "Missing required client capability",
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    );
  }
  return authorizeTask(post, access, taskId);
}

/** Registers the extension's methods (and its capability) on a 2026-07-28 request's server. */
export function registerTasks(post: ModernPost): void {
  const { server } = post;
  const call = { ...post, observer: {} };
  server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
  server.setRequestHandler("tasks/get", { params: getParams }, async (params, ctx) =>
    getTask(call, await taskFor(post, ctx, "get", params.taskId)),
  );
  // The SDK lifts `inputResponses` out of the params (as for a retry's): the context has them.
  server.setRequestHandler("tasks/update", { params: getParams }, async (params, ctx) => {
    const task = await taskFor(post, ctx, "update", params.taskId);
    await updateTask(call, task, ctx.mcpReq.inputResponses ?? {});
    return {};
  });
  server.setRequestHandler("tasks/cancel", { params: getParams }, async (params, ctx) => {
    await cancelTask(call, await taskFor(post, ctx, "cancel", params.taskId));
    return {};
  });
}
