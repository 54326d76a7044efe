/**
 * The writer thread's side of the checkpoint thread (sqlite-checkpoint-worker.ts): it follows each
 * file the writer thread has a connection open on, from the open to the close.
 */
import type { Worker } from "node:worker_threads";
import { moduleWorker } from "../core/module-worker.ts";
import type { ConnectionOptions } from "./sqlite-connection.ts";

export type ToCheckpointer =
  | { type: "follow"; location: string; synchronous: ConnectionOptions["synchronous"] }
  | { type: "unfollow"; location: string; closed: SharedArrayBuffer };

/**
 * Pages of write-ahead log past which the writer's connection checkpoints by itself (SQLite's
 * `wal_autocheckpoint`): far above what the checkpoint thread lets accumulate (SQLite's default
 * is 1,000), so that only a checkpoint thread that fell behind or stopped leaves it to the writer.
 */
export const WRITER_CHECKPOINT_PAGES = 20_000;

/** How long a close waits for the checkpoint thread to close its connection (then goes on). */
const UNFOLLOW_WAIT_MS = 10_000;

/** The connections of the writer thread on each file (a thread started again follows them too). */
const followed = new Map<string, { users: number; synchronous: ConnectionOptions["synchronous"] }>();
let thread: Worker | undefined;
/** A checkpoint thread that stopped sooner than this after its start is not started again. */
const RESTART_AFTER_MS = 5_000;

/** Starts checkpointing `location` in the background. */
export function followFile(location: string, options: ConnectionOptions): void {
  const file = followed.get(location);
  if (file !== undefined) file.users++;
  else followed.set(location, { users: 1, synchronous: options.synchronous });
  checkpointThread().postMessage({ type: "follow", location, synchronous: options.synchronous });
}

/**
 * Stops following `location`, and waits (blocking this thread) until the checkpoint thread closed
 * its connection: so that once the store is closed, the last connection's close has written the
 * log into the database file and removed it, as without the checkpoint thread.
 */
export function unfollowFile(location: string): void {
  const file = followed.get(location);
  if (file !== undefined && --file.users === 0) followed.delete(location);
  if (thread === undefined) return;
  const closed = new SharedArrayBuffer(4);
  const message: ToCheckpointer = { type: "unfollow", location, closed };
  thread.postMessage(message);
  Atomics.wait(new Int32Array(closed), 0, 0, UNFOLLOW_WAIT_MS);
}

function checkpointThread(): Worker {
  if (thread !== undefined) return thread;
  const extension = import.meta.url.endsWith(".ts") ? "ts" : "js";
  const started = moduleWorker(new URL(`./sqlite-checkpoint-worker.${extension}`, import.meta.url));
  const startedAt = Date.now();
  // Never what keeps the writer thread (or the process) alive.
  started.unref();
  started.on("error", () => {});
  started.on("exit", () => {
    if (thread !== started) return;
    thread = undefined;
    // A thread that stopped is started again for the files still open, unless it stops as it
    // starts (then the writer's own checkpoints bound the log).
    if (Date.now() - startedAt < RESTART_AFTER_MS) return;
    for (const [location, file] of followed) {
      for (let i = 0; i < file.users; i++) {
        checkpointThread().postMessage({ type: "follow", location, synchronous: file.synchronous });
      }
    }
  });
  thread = started;
  return started;
}
