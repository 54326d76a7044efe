/** What SQLite (or anything else) threw, as a `WritError` that says what to do. */
import Database from "better-sqlite3";
import { WritError } from "../core/errors.ts";

/** Maps what SQLite (or anything else) threw to a `WritError` that says what to do. */
export function sqliteStoreError(
  error: unknown,
  what: string,
  busyTimeoutMs: number,
  location?: string,
): WritError {
  if (error instanceof WritError) return error;
  const where = location === undefined ? "" : ` (${location})`;
  if (error instanceof Database.SqliteError) {
    const code = error.code;
    if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
      return new WritError(
        "backend_unavailable",
        `cannot ${what}: the database${where} stayed locked for ${busyTimeoutMs} ms`,
        {
          retryable: true,
          suggestedFix:
            "retry; if it keeps happening, look for another process holding a long write transaction on the file",
          cause: error,
        },
      );
    }
    if (code.startsWith("SQLITE_FULL") || code.startsWith("SQLITE_IOERR")) {
      return new WritError(
        "backend_unavailable",
        `cannot ${what}: the disk failed or is full${where}: ${error.message}`,
        {
          retryable: true,
          suggestedFix: "free disk space or fix the disk, then retry",
          cause: error,
        },
      );
    }
    if (
      code.startsWith("SQLITE_READONLY") ||
      code.startsWith("SQLITE_CANTOPEN") ||
      code.startsWith("SQLITE_PERM")
    ) {
      return new WritError(
        "internal",
        `cannot ${what}: the database file cannot be written${where}: ${error.message}`,
        {
          suggestedFix: "make the database file and its folder writable by the Writ process",
          cause: error,
        },
      );
    }
    if (code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_NOTADB")) {
      return new WritError("internal", `cannot ${what}: the file is not a valid SQLite database${where}`, {
        suggestedFix: "point Writ at its own database file, or restore the file from a backup",
        cause: error,
      });
    }
    if (/no such table|no such column/.test(error.message)) {
      return new WritError("internal", `cannot ${what}: the database has no Writ schema${where}`, {
        suggestedFix: "call migrate() (or open the store with SqliteStore.open) before using it",
        cause: error,
      });
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return new WritError("internal", `cannot ${what}${where}: ${message}`, {
    suggestedFix: "check the server log for the cause, fix it and retry",
    cause: error,
  });
}
