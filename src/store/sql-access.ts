/**
 * What the SQL of every capability runs on (resources, approvals, the decision log, …): the two
 * primitives each store provides, `rows` (a statement's rows) and `execute` (how many rows it
 * changed), with the store's dialect, clock and location. A capability's shared implementation
 * takes a `SqlAccess`; a store keeps what differs (connecting, migrating, locking).
 */
import type { Dialect } from "./dialect.ts";
import type { Sql } from "./sql.ts";

/** The two primitives a statement runs on. */
export interface SqlRunner {
  /** The rows a statement returns; failures as `WritError`s that say they happened trying `what`. */
  rows(what: string, query: Sql): Promise<unknown[]>;
  /** Runs a statement that returns no rows; how many rows it changed. */
  execute(what: string, query: Sql): Promise<number>;
}

export interface SqlAccess extends SqlRunner {
  readonly dialect: Dialect;
  /** The clock for `updated_at`, expiries and leases. */
  readonly clock: () => Date;
  /** Where the data is, for messages (a file path, or a URL without its password). */
  readonly location: string;
}

/**
 * A read-then-write written once for both dialects: it yields each statement and is answered
 * with that statement's rows. SQLite runs it on its writer under the write lock
 * ({@link runStepsNow}); PostgreSQL statement by statement ({@link runSteps}).
 */
export type SqlSteps<T> = Generator<Sql, T, unknown[]>;

/** Runs `steps` with a synchronous statement runner (SQLite, inside its transaction). */
export function runStepsNow<T>(steps: SqlSteps<T>, all: (query: Sql) => unknown[]): T {
  let step = steps.next();
  while (!step.done) step = steps.next(all(step.value));
  return step.value;
}

/** Runs `steps` one statement at a time, each failure saying it happened trying `what`. */
export async function runSteps<T>(db: SqlRunner, what: string, steps: SqlSteps<T>): Promise<T> {
  let step = steps.next();
  while (!step.done) step = steps.next(await db.rows(what, step.value));
  return step.value;
}
