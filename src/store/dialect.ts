/**
 * What differs between the SQL of SQLite and PostgreSQL where the statements are otherwise the
 * same (the shared ones are in each capability's module). Locking, transactions, connections
 * and migrations differ too; they stay in each store's own module.
 */
import type { Sql } from "./sql.ts";

export interface Dialect {
  /** The placeholder of the `index`th value (1-based): `?` or `$1`. */
  placeholder(index: number): string;
  /** The generated column holding an entry's timestamp (`decisions`). */
  readonly timestampColumn: string;
  /**
   * Whether an aggregate query with one `max()` takes its bare columns from the row holding the
   * maximum (SQLite does; PostgreSQL has no bare columns).
   */
  readonly bareColumnsOfMax: boolean;
  /** The stored entry's `path` (`writ/decision`, `writ/shadow`, …), as the index on it has it. */
  readonly entryPath: Sql;
  /** Whether the stored entry (column `decisions.entry`) has a reason with this code. */
  entryHasReason(code: string): Sql;
  /**
   * Whether the stored entry belongs to a Code Mode run: `input.context.run.id` (a decided call)
   * or `input.run.id` (a call refused before the policy).
   */
  entryInRun(runId: string): Sql;
  /** Whether an approval's `approver_roles` include one of `roles`. */
  approverRolesOverlap(roles: readonly string[]): Sql;
  /** The value stored in a column of strings (`approvals.approver_roles`). */
  textArray(values: readonly string[]): unknown;
  /** An approval's `record` column as read, as JSON (SQLite holds text; PostgreSQL jsonb, parsed). */
  recordJson(column: unknown): unknown;
  /** The unique-key violation a store error stands for, or undefined when it is something else. */
  uniqueViolation(error: unknown): unknown;
}
