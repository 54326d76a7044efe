/**
 * Checks shared by every `Store` implementation: decision filters, page sizes and cursors. Cursors
 * are opaque to callers: base64url of the last `seq` of the page.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import { decisionKinds } from "../core/types.ts";
import type { DecisionFilter, DecisionLogEntry } from "./decision-entry.ts";
import { raw, type Sql, sql } from "./sql.ts";
import type { TenantScope } from "./tenancy.ts";

export const MAX_PAGE_SIZE = 500;

/** An ISO 8601 date or date-time (with `Z` or an offset), normalized to `toISOString()` form. */
const instantSchema = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()])
  .transform((text) => new Date(text).toISOString());

const filterSchema = z
  .object({
    subject: z.string().optional(),
    tenant: z.string().optional(),
    action: z.string().optional(),
    decision: z.enum([...decisionKinds, "error"]).optional(),
    reason: z.string().optional(),
    resourceType: z.string().optional(),
    resourceId: z.string().optional(),
    path: z.string().optional(),
    run: z.string().optional(),
    since: instantSchema.optional(),
    until: instantSchema.optional(),
  })
  .strict();

/**
 * Validates a filter and normalizes its time bounds so that they compare as text with stored
 * timestamps (which are stored in `toISOString()` form).
 */
export function normalizeFilter(filter: DecisionFilter): DecisionFilter {
  const parsed = filterSchema.safeParse(filter);
  if (!parsed.success) {
    throw new WritError("invalid_argument", "the decision filter is invalid", {
      fieldErrors: fieldErrorsFromZod(parsed.error, "/filter"),
      suggestedFix:
        "use only subject, tenant, action, decision (allow|deny|require_approval|allow_with_conditions|error), reason, resourceType, resourceId, path, run, and ISO 8601 times for since/until (e.g. 2025-01-31T12:00:00Z)",
    });
  }
  return parsed.data;
}

/** A page size: a positive integer, capped at {@link MAX_PAGE_SIZE}. */
export function pageSize(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new WritError("invalid_argument", `limit must be a positive integer, got ${String(limit)}`, {
      fieldErrors: [{ path: "/limit", message: "expected a positive integer" }],
      suggestedFix: `pass a limit between 1 and ${MAX_PAGE_SIZE} (larger values are capped at ${MAX_PAGE_SIZE})`,
    });
  }
  return Math.min(limit, MAX_PAGE_SIZE);
}

export function encodeCursor(seq: number): string {
  return Buffer.from(String(seq), "utf8").toString("base64url");
}

/** The `seq` a cursor points after; throws `invalid_argument` for anything `encodeCursor` did not make. */
export function decodeCursor(cursor: string): number {
  const text = /^[A-Za-z0-9_-]{1,24}$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("utf8") : "";
  const seq = /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(seq) || encodeCursor(seq) !== cursor) throw badCursor();
  return seq;
}

function badCursor(): WritError {
  return new WritError("invalid_argument", "the cursor is not one this log handed out", {
    fieldErrors: [{ path: "/cursor", message: "not a cursor returned as next_cursor" }],
    suggestedFix:
      "pass the next_cursor of the previous page unchanged, or omit the cursor to start at the newest entry",
  });
}

/** A short tag of a scope, so that a cursor handed out in one scope is refused in another. */
function scopeTag(scope: TenantScope): string {
  const name = "tenant" in scope ? `tenant:${scope.tenant}` : "all";
  return createHash("sha256").update(`writ-cursor-scope-v1\n${name}`).digest("base64url").slice(0, 16);
}

/** A cursor after `seq` that only the same scope may pass back. */
export function encodeScopedCursor(scope: TenantScope, seq: number): string {
  return `${encodeCursor(seq)}.${scopeTag(scope)}`;
}

/** The `seq` of a cursor {@link encodeScopedCursor} made for this scope; `invalid_argument` otherwise. */
export function decodeScopedCursor(scope: TenantScope, cursor: string): number {
  const dot = cursor.indexOf(".");
  // The same answer as any other bad cursor: it says nothing about the scope it came from.
  if (dot < 0 || cursor.slice(dot + 1) !== scopeTag(scope)) throw badCursor();
  return decodeCursor(cursor.slice(0, dot));
}

/** The first `size` rows, and a cursor after the last of them when the query found more. */
export function pageOf<T>(
  rows: readonly unknown[],
  size: number,
  decode: (row: unknown) => T,
  seqOf: (item: T) => number,
  cursorOf: (seq: number) => string = encodeCursor,
): { items: T[]; next_cursor?: string } {
  const items = rows.slice(0, size).map(decode);
  const last = items.at(-1);
  return rows.length > size && last !== undefined ? { items, next_cursor: cursorOf(seqOf(last)) } : { items };
}

/** Most entries one `readDecisions` call returns. */
export const MAX_READ_BATCH = 10_000;

/** Checks the arguments of `readDecisions`; returns the batch size, capped at {@link MAX_READ_BATCH}. */
export function readBatchSize(fromSeq: number, limit: number): number {
  if (!Number.isSafeInteger(fromSeq) || fromSeq < 1) {
    throw new WritError("invalid_argument", `fromSeq must be a positive integer, got ${String(fromSeq)}`, {
      fieldErrors: [{ path: "/fromSeq", message: "expected a positive integer" }],
      suggestedFix: "start at seq 1 (the first entry) or at the seq after the last entry already read",
    });
  }
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new WritError("invalid_argument", `limit must be a positive integer, got ${String(limit)}`, {
      fieldErrors: [{ path: "/limit", message: "expected a positive integer" }],
      suggestedFix: `read in batches of 1 to ${MAX_READ_BATCH} entries`,
    });
  }
  return Math.min(limit, MAX_READ_BATCH);
}

/** The rows of `table` (its `columns`) in seq order from `fromSeq` (inclusive), at most `limit`. */
export function seqRangeQuery(
  table: "decisions" | "checkpoints",
  columns: Sql,
  fromSeq: number,
  limit: number,
): Sql {
  const size = readBatchSize(fromSeq, limit);
  return sql`SELECT ${columns} FROM ${raw(table)} WHERE seq >= ${fromSeq} ORDER BY seq LIMIT ${size}`;
}

/**
 * Whether an entry passes a filter, with the same meaning as `queryDecisions` (for stores or
 * readers that filter in memory). `filter` must come from {@link normalizeFilter}.
 */
export function matchesDecisionFilter(entry: DecisionLogEntry, filter: DecisionFilter): boolean {
  return (
    (filter.subject === undefined || entry.subject === filter.subject) &&
    (filter.tenant === undefined || entry.tenant === filter.tenant) &&
    (filter.action === undefined || entry.action === filter.action) &&
    (filter.decision === undefined || entry.decision === filter.decision) &&
    (filter.reason === undefined || entry.reasons.some((reason) => reason.code === filter.reason)) &&
    (filter.resourceType === undefined || entry.resource?.type === filter.resourceType) &&
    (filter.resourceId === undefined || entry.resource?.id === filter.resourceId) &&
    (filter.path === undefined || entry.path === filter.path) &&
    (filter.run === undefined || runOfInput(entry.input)?.id === filter.run) &&
    (filter.since === undefined || entry.timestamp >= filter.since) &&
    (filter.until === undefined || entry.timestamp < filter.until)
  );
}

/** The Code Mode run a logged input names: `context.run` (a decided call) or `run` (a call refused before the policy). */
export function runOfInput(input: unknown): { id: string; decision_id: string } | undefined {
  const field = (value: unknown, key: string): unknown =>
    typeof value === "object" && value !== null && key in value ? Reflect.get(value, key) : undefined;
  const run = field(field(input, "context"), "run") ?? field(input, "run");
  const id = field(run, "id");
  const decisionId = field(run, "decision_id");
  return typeof id === "string" && typeof decisionId === "string"
    ? { id, decision_id: decisionId }
    : undefined;
}
