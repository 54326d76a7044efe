/**
 * The SQLite writer thread: one connection per store file of the process, and every write of
 * those stores. Calls that arrive while a commit is in progress are run together afterwards, in
 * arrival order, in one transaction per store (group commit: one sync to disk for all of them);
 * each call inside it is a savepoint, so a call that fails is undone alone. A store's calls are
 * answered only once their transaction is committed (durable, with `synchronous = FULL`).
 */
import { parentPort } from "node:worker_threads";
import { WritError } from "../core/errors.ts";
import { runClonedWrite, SqliteConnection } from "./sqlite-connection.ts";
import { plainError } from "./sqlite-plain-error.ts";
import type { FromWriter, ToWriter } from "./sqlite-writer-protocol.ts";

const port = parentPort;
if (port === null) throw new Error("sqlite-writer-worker.ts runs as a worker thread");

const connections = new Map<number, SqliteConnection>();
let queue: ToWriter[] = [];
let scheduled = false;

port.on("message", (message: ToWriter) => {
  queue.push(message);
  if (!scheduled) {
    scheduled = true;
    // Let the messages already delivered join this group.
    setImmediate(runQueue);
  }
});

function reply(message: FromWriter): void {
  port?.postMessage(message);
}

function fail(id: number, error: unknown): void {
  reply({ id, ok: false, error: plainError(error) });
}

function runQueue(): void {
  scheduled = false;
  const messages = queue;
  queue = [];
  // Calls are grouped per store, up to the next open or close of that store (kept in order).
  let group: { store: number; calls: Extract<ToWriter, { type: "call" }>[] } | undefined;
  const flush = () => {
    if (group) runGroup(group.store, group.calls);
    group = undefined;
  };
  for (const message of messages) {
    if (message.type === "call") {
      if (group && group.store !== message.store) flush();
      group ??= { store: message.store, calls: [] };
      group.calls.push(message);
      continue;
    }
    flush();
    if (message.type === "open") {
      try {
        connections.set(message.store, new SqliteConnection(message.location, message.options));
        reply({ id: message.id, ok: true, value: null });
      } catch (error) {
        fail(message.id, error);
      }
    } else {
      connections.get(message.store)?.close();
      connections.delete(message.store);
      reply({ id: message.id, ok: true, value: null });
    }
  }
  flush();
}

/** Thrown out of the group's transaction when SQLite undid the whole transaction itself. */
class GroupAborted extends Error {}

function runGroup(store: number, calls: Extract<ToWriter, { type: "call" }>[]): void {
  const conn = connections.get(store);
  if (conn === undefined) {
    const closed = new WritError("internal", "the store's writer connection is closed", {
      suggestedFix: "open a new store instead of reusing a closed one",
    });
    for (const call of calls) fail(call.id, closed);
    return;
  }
  const replies: FromWriter[] = [];
  try {
    conn.db
      .transaction(() => {
        for (const call of calls) {
          try {
            const value = conn.db.transaction(() => runClonedWrite(conn, call.procedure, call.args))();
            replies.push({ id: call.id, ok: true, value });
          } catch (error) {
            // SQLite ends the whole transaction on some errors (disk full, I/O): then nothing of
            // the group was written.
            if (!conn.db.inTransaction) throw new GroupAborted("aborted", { cause: error });
            replies.push({ id: call.id, ok: false, error: plainError(error) });
          }
        }
      })
      .immediate();
  } catch (error) {
    const cause = error instanceof GroupAborted ? error.cause : error;
    for (const call of calls) fail(call.id, cause);
    return;
  }
  for (const message of replies) reply(message);
}
