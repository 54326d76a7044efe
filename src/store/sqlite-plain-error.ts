/**
 * Errors made plain data on their way back from the SQLite writer thread (a structured clone
 * keeps an Error's message but not its class or fields), and revived as what they were.
 */
import Database from "better-sqlite3";
import { type ErrorCategory, WritError } from "../core/errors.ts";

export interface PlainError {
  message: string;
  stack?: string;
  /** Set for SQLite's own errors: its result code (SQLITE_BUSY, SQLITE_CONSTRAINT_UNIQUE, …). */
  sqliteCode?: string;
  writ?: {
    category: ErrorCategory;
    retryable: boolean;
    fieldErrors: { path: string; message: string }[];
    suggestedFix: string;
    effectCommitted: boolean | "unknown";
  };
  cause?: PlainError;
}

/** An error as plain data, its cause chain (WritError → SqliteError) kept. */
export function plainError(error: unknown, depth = 0): PlainError {
  if (!(error instanceof Error)) return { message: String(error) };
  const plain: PlainError = { message: error.message, ...(error.stack ? { stack: error.stack } : {}) };
  if (error instanceof Database.SqliteError) plain.sqliteCode = error.code;
  if (error instanceof WritError) {
    plain.writ = {
      category: error.category,
      retryable: error.retryable,
      fieldErrors: error.fieldErrors,
      suggestedFix: error.suggestedFix,
      effectCommitted: error.effectCommitted,
    };
  }
  if (error.cause !== undefined && depth < 3) plain.cause = plainError(error.cause, depth + 1);
  return plain;
}

/** The error again, as the class it was thrown as (WritError, SqliteError, or Error). */
export function revivedError(plain: PlainError): Error {
  const cause = plain.cause === undefined ? undefined : revivedError(plain.cause);
  let error: Error;
  if (plain.writ) {
    error = new WritError(plain.writ.category, plain.message, {
      suggestedFix: plain.writ.suggestedFix,
      fieldErrors: plain.writ.fieldErrors,
      retryable: plain.writ.retryable,
      effectCommitted: plain.writ.effectCommitted,
      ...(cause === undefined ? {} : { cause }),
    });
  } else if (plain.sqliteCode !== undefined) {
    error = new Database.SqliteError(plain.message, plain.sqliteCode);
  } else {
    error = new Error(plain.message, cause === undefined ? undefined : { cause });
  }
  if (plain.stack !== undefined) error.stack = plain.stack;
  return error;
}
