/**
 * The messages between the SQLite store and its writer thread (errors come back as plain data:
 * sqlite-plain-error.ts).
 */
import type { ConnectionOptions, ProcedureName } from "./sqlite-connection.ts";
import type { PlainError } from "./sqlite-plain-error.ts";

export type ToWriter =
  | { type: "open"; id: number; store: number; location: string; options: ConnectionOptions }
  | { type: "call"; id: number; store: number; procedure: ProcedureName; args: readonly unknown[] }
  | { type: "close"; id: number; store: number };

export type FromWriter =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: PlainError };
