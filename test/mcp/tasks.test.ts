/**
 * The tasks extension (`io.modelcontextprotocol/tasks`) on 2026-07-28 `/mcp`, against a real
 * gateway on loopback, as raw requests (the v2 SDK's client has no runtime for the extension: it
 * refuses `resultType: "task"` and `tasks/*` toward a 2026-07-28 server). A call from a client
 * declaring the extension becomes a task: allowed, it runs in the background and `tasks/get`
 * returns its result; waiting for approval, the task asks for the approval's page, and once an
 * approver approves through the API the next `tasks/get` runs the call, once; rejected, the task
 * ends with the structured refusal; cancelled, it is `cancelled`. Every `tasks/*` request is
 * decided by the policy on the task (`mcp.task`, owned by its caller) and logged: another
 * subject's or tenant's `tasks/get` gets the answer of a task that does not exist.
 */
import { CLIENT_CAPABILITIES_META_KEY } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { logEntries, README_ARGS, readForEdit, WS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
import { postModern } from "../support/mcp-v2-client.ts";

const EXTENSION = "io.modelcontextprotocol/tasks";
const TASKS = { [CLIENT_CAPABILITIES_META_KEY]: { extensions: { [EXTENSION]: {} } } };
const TASKS_AND_URLS = {
  [CLIENT_CAPABILITIES_META_KEY]: { extensions: { [EXTENSION]: {} }, elicitation: { url: {} } },
};
const SUM = "src/sum.ts";

const taskSchema = z.object({
  taskId: z.string(),
  status: z.enum(["working", "input_required", "completed", "failed", "cancelled"]),
  statusMessage: z.string().optional(),
  createdAt: z.iso.datetime(),
  lastUpdatedAt: z.iso.datetime(),
  ttlMs: z.number().int().positive(),
  pollIntervalMs: z.number().int().positive(),
  result: z
    .object({ isError: z.boolean().optional(), structuredContent: z.record(z.string(), z.unknown()) })
    .passthrough()
    .optional(),
  inputRequests: z.record(z.string(), z.unknown()).optional(),
});
const answerSchema = z.object({
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown() }).optional(),
});
const urlElicitationSchema = z.object({
  method: z.literal("elicitation/create"),
  params: z.object({ mode: z.literal("url"), url: z.string(), message: z.string() }),
});

let gw: TestGateway;
let alice: string;
let bob: string;
let mallory: string;
let carol: string;
beforeAll(async () => {
  gw = await startTestGateway();
  alice = await gw.token("alice");
  bob = await gw.token("bob");
  mallory = await gw.token("alice", { tenant: "other" });
  carol = await gw.token("carol", { roles: ["maintainer"] });
}, 60_000);
afterAll(() => gw?.close());

async function rpc(
  token: string,
  method: string,
  params: Record<string, unknown>,
  meta: Record<string, unknown> = TASKS,
) {
  const response = await postModern(gw.url, token, { method, params, meta });
  return answerSchema.parse(await response.json());
}

/** A `tools/call` answered with a task (`resultType: "task"`). */
async function callAsTask(
  name: string,
  args: Record<string, unknown>,
  meta: Record<string, unknown> = TASKS,
) {
  const { result, error } = await rpc(alice, "tools/call", { name, arguments: args }, meta);
  expect(error).toBeUndefined();
  expect(result?.resultType).toBe("task");
  expect(result).not.toHaveProperty("content");
  return taskSchema.parse(result);
}

async function getTask(taskId: string, token = alice) {
  const { result, error } = await rpc(token, "tasks/get", { taskId });
  if (error !== undefined) throw new Error(`tasks/get: ${JSON.stringify(error)}`);
  expect(result?.resultType).toBe("complete");
  return taskSchema.parse(result);
}

/** Polls `tasks/get` until the task ended. */
function ended(taskId: string) {
  return waitFor(
    `task ${taskId} to end`,
    async () => {
      const task = await getTask(taskId);
      return ["completed", "failed", "cancelled"].includes(task.status) ? task : undefined;
    },
    15_000,
  );
}

async function editArgs(before: string, after: string) {
  return { workspace: WS, path: SUM, base_hash: await readForEdit(gw, alice, SUM), before, after };
}

/** The one pending approval of alice's for `args`' edit. */
async function pendingApproval(url: string): Promise<string> {
  const id = decodeURIComponent(url.split("#approval-")[1] ?? "");
  const pending = await gw.request("GET", `/v1/approvals/${id}`, { token: carol });
  expect(pending.status, pending.text).toBe(200);
  return id;
}

describe("a call from a client declaring the tasks extension", () => {
  it("is a task when allowed: server/discover declares the extension; tasks/get returns the result", async () => {
    const discover = await rpc(alice, "server/discover", {});
    expect(discover.result?.capabilities).toMatchObject({ extensions: { [EXTENSION]: {} } });

    const created = await callAsTask("repo_read", README_ARGS);
    expect(["working", "completed"]).toContain(created.status);
    const done = await ended(created.taskId);
    expect(done.status).toBe("completed");
    expect(done.result?.isError).toBeFalsy();
    expect(done.result?.structuredContent).toMatchObject({ hash: expect.any(String) });

    // A call refused at once is answered as without the extension: no task.
    const denied = await rpc(alice, "tools/call", {
      name: "repo_read",
      arguments: { workspace: WS, path: ".env" },
    });
    expect(denied.result).toMatchObject({ resultType: "complete", isError: true });

    // The read was decided (a grant), run once, and each tasks/get decided on the task and logged.
    const gets = await logEntries(gw, { action: "mcp.tasks.get", resource_id: created.taskId });
    expect(gets.length).toBeGreaterThan(0);
    expect(gets.every((e) => e.decision === "allow" && e.subject === "alice")).toBe(true);
    expect(gets[0]?.resource).toEqual({ type: "mcp.task", id: created.taskId });
  });

  it("waits for an approval as a task; approved through the API, the next tasks/get runs it once", async () => {
    const task = await callAsTask("repo_apply_edit", await editArgs("a - b", "a + b"), TASKS_AND_URLS);
    expect(task.status).toBe("input_required");
    const waiting = await getTask(task.taskId);
    const elicitation = urlElicitationSchema.parse(waiting.inputRequests?.writ_approval).params;
    expect(elicitation.message).toContain("maintainer");
    const approvalId = await pendingApproval(elicitation.url);
    expect(elicitation.url).toBe(`${gw.url}/console/approvals#approval-${approvalId}`);

    // The user opened the page: the task waits, working, for the approver.
    const ack = await rpc(alice, "tasks/update", {
      taskId: task.taskId,
      inputResponses: { writ_approval: { action: "accept" } },
    });
    expect(ack.result, JSON.stringify(ack.error)).toMatchObject({ resultType: "complete" });
    expect((await getTask(task.taskId)).status).toBe("working");
    expect(await gw.repository.read(SUM)).toContain("a - b");

    const approved = await gw.request("POST", `/v1/approvals/${approvalId}/approve`, {
      token: carol,
      body: {},
    });
    expect(approved.status, approved.text).toBe(200);
    const done = await ended(task.taskId);
    expect(done.status).toBe("completed");
    expect(done.result?.isError, JSON.stringify(done.result)).toBeFalsy();
    expect(await gw.repository.read(SUM)).toBe("export const sum = (a: number, b: number) => a + b;\n");
    const collected = (await logEntries(gw, { path: "writ/approvals" })).find(
      (e) => e.approval_id === approvalId && e.grant_jti !== null,
    );
    const executed = (await logEntries(gw, { path: "writ/execute" })).filter(
      (e) => e.grant_jti === collected?.grant_jti,
    );
    expect(executed.map((e) => e.decision)).toEqual(["allow"]);
  });

  it("refuses another subject's or tenant's tasks/get as a task that does not exist, and logs it", async () => {
    const { taskId } = await callAsTask("repo_read", README_ARGS);
    const unknown = await rpc(bob, "tasks/get", { taskId: "00000000-0000-4000-8000-000000000000" });
    for (const token of [bob, mallory]) {
      const { result, error } = await rpc(token, "tasks/get", { taskId });
      expect(result).toBeUndefined();
      expect(error?.code).toBe(-32602);
      const data = z.object({ error: writErrorSchema }).parse(error?.data);
      expect(data.error.category).toBe("not_found");
      expect(error?.message.replace(taskId, "<id>")).toBe(
        unknown.error?.message.replace("00000000-0000-4000-8000-000000000000", "<id>"),
      );
    }
    const refused = await logEntries(gw, { action: "mcp.tasks.get", resource_id: taskId, decision: "deny" });
    expect(refused.map((e) => [e.subject, e.tenant])).toEqual(
      expect.arrayContaining([
        ["bob", "demo"],
        ["alice", "other"],
      ]),
    );
    expect(refused.find((e) => e.subject === "bob")?.reasons.map((r) => r.code)).toEqual(["not_owner"]);

    // Without the extension declared, tasks/* is -32021, naming it.
    const undeclared = await rpc(alice, "tasks/get", { taskId }, { [CLIENT_CAPABILITIES_META_KEY]: {} });
    expect(undeclared.error?.code).toBe(-32021);
    expect(JSON.stringify(undeclared.error?.data)).toContain(EXTENSION);
  });

  it("ends with the structured refusal when the approval is rejected, and cancelled when cancelled", async () => {
    const rejected = await callAsTask("repo_apply_edit", await editArgs("a + b", "b + a"));
    expect(rejected.status).toBe("working");
    expect(rejected.statusMessage).toContain("maintainer");
    const approvals = z
      .object({ approvals: z.array(z.object({ id: z.string(), requester: z.object({ id: z.string() }) })) })
      .parse((await gw.request("GET", "/v1/approvals?status=pending", { token: carol })).json);
    const [approval] = approvals.approvals.filter((a) => a.requester.id === "alice");
    const decided = await gw.request("POST", `/v1/approvals/${approval?.id}/reject`, {
      token: carol,
      body: { reason: "not this one" },
    });
    expect(decided.status, decided.text).toBe(200);
    const done = await getTask(rejected.taskId);
    expect(done.status).toBe("completed");
    expect(done.result?.isError).toBe(true);
    const refusal = z.object({ error: writErrorSchema }).parse(done.result?.structuredContent).error;
    expect(refusal.category).toBe("policy_denied");
    expect(refusal.message).toContain("rejected");

    const before = await gw.repository.read(SUM);
    const cancelled = await callAsTask("repo_apply_edit", await editArgs("a + b", "a + b + 0"));
    expect((await rpc(alice, "tasks/cancel", { taskId: cancelled.taskId })).result).toMatchObject({
      resultType: "complete",
    });
    expect((await getTask(cancelled.taskId)).status).toBe("cancelled");
    expect(await gw.repository.read(SUM)).toBe(before);
    const cancels = await logEntries(gw, { action: "mcp.tasks.cancel", resource_id: cancelled.taskId });
    expect(cancels.map((e) => e.decision)).toEqual(["allow"]);
  });
});
