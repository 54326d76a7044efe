/**
 * MCP tasks (`mcp_tasks`, SQLite migration 16, PostgreSQL migration 17): the tasks of the
 * `io.modelcontextprotocol/tasks` extension on Writ's 2026-07-28 `/mcp` (src/mcp/tasks.ts).
 * `McpTaskStore` and its SQL (`SqlMcpTasks`), the same in both dialects.
 *
 * A task is bound to the tenant and subject whose call it is; every read names the tenant (a
 * task of another tenant is one that does not exist). Each change is one conditional statement
 * (from the statuses it may leave, and for a claim only while no instance runs it), so instances
 * sharing a store agree on a task's status and only one of them runs its call.
 */
import { z } from "zod";
import { join, sql } from "./sql.ts";
import type { SqlAccess } from "./sql-access.ts";

export const mcpTaskStatuses = ["working", "input_required", "completed", "failed", "cancelled"] as const;
export type McpTaskStatus = (typeof mcpTaskStatuses)[number];
/** The statuses a task never leaves. */
export const TERMINAL_TASK_STATUSES: readonly McpTaskStatus[] = ["completed", "failed", "cancelled"];

/** The call a task runs (a `tools/call`'s name and arguments). */
export interface McpTaskCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface McpTaskRecord {
  id: string;
  tenant: string;
  /** The subject whose call it is. */
  owner: string;
  status: McpTaskStatus;
  statusMessage: string | null;
  call: McpTaskCall;
  /** The approval the call waits for (or waited for). */
  approvalId: string | null;
  /** The key of the input request outstanding while `input_required`. */
  inputKey: string | null;
  /** The call's result once `completed` (a `CallToolResult`), the JSON-RPC error once `failed`. */
  result: Record<string, unknown> | null;
  error: Record<string, unknown> | null;
  /** Who runs the call (an instance's request), set when it is claimed; null while it waits. */
  runner: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** When it is forgotten (`createdAt` plus its TTL). */
  expiresAt: Date;
}

export type NewMcpTask = Omit<McpTaskRecord, "updatedAt" | "result" | "error">;

/** What a change sets (`status` always; the others when given). */
export interface McpTaskChange {
  status: McpTaskStatus;
  statusMessage?: string | null;
  inputKey?: string | null;
  result?: Record<string, unknown> | null;
  error?: Record<string, unknown> | null;
  runner?: string | null;
}

/** Which tasks a change applies to: those in one of `from`; with `unclaimed`, only while none runs it. */
export interface McpTaskCondition {
  from: readonly McpTaskStatus[];
  unclaimed?: boolean;
  /** Only while this runner has it (a running call's own result). */
  runner?: string;
}

export interface McpTaskStore {
  /** Records a new task (and forgets the expired ones). */
  createMcpTask(task: NewMcpTask): Promise<void>;
  /** The task `id` of `tenant`, unless it expired. */
  getMcpTask(tenant: string, id: string): Promise<McpTaskRecord | undefined>;
  /** Applies `change` when the task meets `when`: whether it did (one statement). */
  updateMcpTask(tenant: string, id: string, when: McpTaskCondition, change: McpTaskChange): Promise<boolean>;
}

const jsonObject = z.record(z.string(), z.unknown());
const callSchema = z.object({ name: z.string(), arguments: jsonObject });
const millis = z.union([z.number(), z.string(), z.bigint()]).transform((v) => new Date(Number(v)));

const rowSchema = z.object({
  id: z.string(),
  tenant: z.string(),
  owner: z.string(),
  status: z.enum(mcpTaskStatuses),
  status_message: z.string().nullable(),
  call: z.string(),
  approval_id: z.string().nullable(),
  input_key: z.string().nullable(),
  result: z.string().nullable(),
  error: z.string().nullable(),
  runner: z.string().nullable(),
  created_at: millis,
  updated_at: millis,
  expires_at: millis,
});

/** A JSON column's object (null when the column is). */
function objectOf(text: string | null): Record<string, unknown> | null {
  return text === null ? null : jsonObject.parse(JSON.parse(text));
}

function recordOf(row: unknown): McpTaskRecord {
  const r = rowSchema.parse(row);
  return {
    id: r.id,
    tenant: r.tenant,
    owner: r.owner,
    status: r.status,
    statusMessage: r.status_message,
    call: callSchema.parse(JSON.parse(r.call)),
    approvalId: r.approval_id,
    inputKey: r.input_key,
    result: objectOf(r.result),
    error: objectOf(r.error),
    runner: r.runner,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    expiresAt: r.expires_at,
  };
}

const json = (value: Record<string, unknown> | null | undefined) =>
  value === null || value === undefined ? null : JSON.stringify(value);

export class SqlMcpTasks implements McpTaskStore {
  constructor(private readonly db: SqlAccess) {}

  async createMcpTask(task: NewMcpTask): Promise<void> {
    const now = this.db.clock().getTime();
    await this.db.execute("forget expired MCP tasks", sql`DELETE FROM mcp_tasks WHERE expires_at <= ${now}`);
    await this.db.execute(
      "record an MCP task",
      sql`INSERT INTO mcp_tasks (id, tenant, owner, status, status_message, call, approval_id, input_key,
         result, error, runner, created_at, updated_at, expires_at)
       VALUES (${task.id}, ${task.tenant}, ${task.owner}, ${task.status}, ${task.statusMessage},
         ${JSON.stringify(task.call)}, ${task.approvalId}, ${task.inputKey}, ${null}, ${null}, ${task.runner},
         ${task.createdAt.getTime()}, ${task.createdAt.getTime()}, ${task.expiresAt.getTime()})`,
    );
  }

  async getMcpTask(tenant: string, id: string): Promise<McpTaskRecord | undefined> {
    const rows = await this.db.rows(
      "read an MCP task",
      sql`SELECT id, tenant, owner, status, status_message, call, approval_id, input_key, result, error,
         runner, created_at, updated_at, expires_at
       FROM mcp_tasks WHERE tenant = ${tenant} AND id = ${id} AND expires_at > ${this.db.clock().getTime()}`,
    );
    const [row] = rows;
    return row === undefined ? undefined : recordOf(row);
  }

  async updateMcpTask(
    tenant: string,
    id: string,
    when: McpTaskCondition,
    change: McpTaskChange,
  ): Promise<boolean> {
    if (when.from.length === 0) return false;
    const sets = [sql`status = ${change.status}`, sql`updated_at = ${this.db.clock().getTime()}`];
    if (change.statusMessage !== undefined) sets.push(sql`status_message = ${change.statusMessage}`);
    if (change.inputKey !== undefined) sets.push(sql`input_key = ${change.inputKey}`);
    if (change.result !== undefined) sets.push(sql`result = ${json(change.result)}`);
    if (change.error !== undefined) sets.push(sql`error = ${json(change.error)}`);
    if (change.runner !== undefined) sets.push(sql`runner = ${change.runner}`);
    const conditions = [
      sql`tenant = ${tenant}`,
      sql`id = ${id}`,
      sql`status IN (${join(
        when.from.map((status) => sql`${status}`),
        ", ",
      )})`,
    ];
    if (when.unclaimed === true) conditions.push(sql`runner IS NULL`);
    if (when.runner !== undefined) conditions.push(sql`runner = ${when.runner}`);
    const changed = await this.db.execute(
      "change an MCP task",
      sql`UPDATE mcp_tasks SET ${join(sets, ", ")} WHERE ${join(conditions, " AND ")}`,
    );
    return changed > 0;
  }
}
