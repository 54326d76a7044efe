/**
 * The SQLite checkpoint thread, started by the writer thread (sqlite-writer-worker.ts): it copies
 * the write-ahead log of each file the writer has open into the database file, every
 * CHECKPOINT_INTERVAL_MS, on a connection of its own. A PASSIVE checkpoint takes no lock a writer
 * waits for, so no commit waits while a checkpoint copies pages and syncs the database file:
 * done in the writer's own connection (SQLite's automatic checkpoint at 1,000 pages), every
 * request whose entry was in the next commit waited for it. The writer's connection still
 * checkpoints by itself past WRITER_CHECKPOINT_PAGES, should this thread fall behind or stop.
 */
import { parentPort } from "node:worker_threads";
import Database from "better-sqlite3";
import type { ToCheckpointer } from "./sqlite-checkpointer.ts";

const CHECKPOINT_INTERVAL_MS = 200;

const port = parentPort;
if (port === null) throw new Error("sqlite-checkpoint-worker.ts runs as a worker thread");

/** The files followed: a connection each, and how many of the writer's connections are on it. */
const files = new Map<string, { db: Database.Database; users: number }>();

port.on("message", (message: ToCheckpointer) => {
  const file = files.get(message.location);
  if (message.type === "follow") {
    if (file !== undefined) file.users++;
    else follow(message.location, message.synchronous);
    return;
  }
  if (file !== undefined && --file.users === 0) {
    files.delete(message.location);
    file.db.close();
  }
  const closed = new Int32Array(message.closed);
  Atomics.store(closed, 0, 1);
  Atomics.notify(closed, 0);
});

function follow(location: string, synchronous: "full" | "normal"): void {
  try {
    // The writer made the file and set WAL mode; a file that is gone is not made again.
    const db = new Database(location, { fileMustExist: true });
    // A checkpoint that meets a writer's lock gives up at once and is tried at the next turn.
    db.pragma("busy_timeout = 0");
    db.pragma(`synchronous = ${synchronous === "normal" ? "NORMAL" : "FULL"}`);
    files.set(location, { db, users: 1 });
  } catch {
    // Not followed: the writer's connection checkpoints by itself past its limit.
  }
}

setInterval(() => {
  for (const [location, file] of files) {
    try {
      file.db.pragma("wal_checkpoint(PASSIVE)");
    } catch {
      // Busy, or the file is gone: the writer's own limit still bounds the log.
      if (!file.db.open) files.delete(location);
    }
  }
}, CHECKPOINT_INTERVAL_MS);
