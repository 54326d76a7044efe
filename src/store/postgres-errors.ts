/** Maps what node-postgres throws to a `WritError` that says what to do next. */
import pg from "pg";
import { WritError } from "../core/errors.ts";

/** Network errors of the connection to the server (Node's errno codes). */
const connectionCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
]);

function codeOf(error: unknown): string | undefined {
  if (error instanceof Error && "code" in error && typeof error.code === "string") return error.code;
  return undefined;
}

export function postgresStoreError(error: unknown, what: string, location: string): WritError {
  if (error instanceof WritError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = codeOf(error);
  const unavailable = (detail: string, suggestedFix: string) =>
    new WritError("backend_unavailable", `cannot ${what}: ${detail} (${location})`, {
      retryable: true,
      suggestedFix,
      cause: error,
    });
  if (error instanceof pg.DatabaseError && code !== undefined) {
    // SQLSTATE classes: https://www.postgresql.org/docs/current/errcodes-appendix.html
    if (code === "40001" || code === "40P01" || code === "55P03" || code === "57014") {
      return unavailable(`the database gave up on the statement (${message})`, "retry the request");
    }
    if (code.startsWith("08") || code.startsWith("57P") || code.startsWith("53")) {
      return unavailable(
        `the database is unavailable or out of resources (${message})`,
        "retry; if it persists, check the PostgreSQL server (running, disk space, max_connections)",
      );
    }
    if (code.startsWith("28")) {
      return new WritError(
        "internal",
        `cannot ${what}: PostgreSQL refused the login (${location}): ${message}`,
        {
          suggestedFix:
            "fix the user name and password in the database URL (WRIT_DATABASE_URL or store.postgres.url)",
          cause: error,
        },
      );
    }
    if (code === "3D000") {
      return new WritError("internal", `cannot ${what}: the database does not exist (${location})`, {
        suggestedFix: "create the database (createdb) or fix its name in the database URL",
        cause: error,
      });
    }
    if (code === "42P01" || code === "42703") {
      return new WritError("internal", `cannot ${what}: the database has no Writ schema (${location})`, {
        suggestedFix: "call migrate() (or open the store with PostgresStore.open) before using it",
        cause: error,
      });
    }
  }
  if (
    (code !== undefined && connectionCodes.has(code)) ||
    /timeout exceeded when trying to connect|Connection terminated/i.test(message)
  ) {
    return unavailable(
      `cannot reach PostgreSQL (${message})`,
      "check that the server runs and that the host and port in the database URL are right, then retry",
    );
  }
  return new WritError("internal", `cannot ${what} (${location}): ${message}`, {
    suggestedFix: "check the server log for the cause, fix it and retry",
    cause: error,
  });
}

/** A unique-key violation (SQLSTATE 23505). */
export function postgresUnique(error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.code === "23505";
}
