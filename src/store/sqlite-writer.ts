/**
 * Where the SQLite store's writes run. A database file is written by the process's writer thread
 * (sqlite-writer-worker.ts, started on the first write and shared by every store of the process):
 * a commit syncs to disk there, while the event loop goes on serving requests, and the writes
 * that queue up meanwhile are committed together. An in-memory database (which another
 * connection cannot see) is written in the store's own thread.
 */
import type { Worker } from "node:worker_threads";
import { WritError } from "../core/errors.ts";
import { moduleWorker } from "../core/module-worker.ts";
import {
  type ConnectionOptions,
  type ProcedureArgs,
  type ProcedureName,
  type ProcedureResult,
  runWrite,
  type SqliteConnection,
} from "./sqlite-connection.ts";
import { revivedError } from "./sqlite-plain-error.ts";
import type { FromWriter, ToWriter } from "./sqlite-writer-protocol.ts";

export interface SqliteWriter {
  /** Runs a write procedure in its own transaction (BEGIN IMMEDIATE); resolves once committed. */
  call<P extends ProcedureName>(procedure: P, args: ProcedureArgs<P>): Promise<ProcedureResult<P>>;
  /** Waits for the calls in progress and releases the writer's connection. */
  close(): Promise<void>;
}

/** Writes on the store's own connection, in this thread. */
export class InlineWriter implements SqliteWriter {
  readonly #conn: SqliteConnection;

  constructor(conn: SqliteConnection) {
    this.#conn = conn;
  }

  async call<P extends ProcedureName>(procedure: P, args: ProcedureArgs<P>): Promise<ProcedureResult<P>> {
    return this.#conn.db.transaction(() => runWrite(this.#conn, procedure, args)).immediate();
  }

  async close(): Promise<void> {}
}

/** Writes through the process's writer thread, on a connection of its own to `location`. */
export class ThreadWriter implements SqliteWriter {
  readonly #store = nextStore++;
  readonly #location: string;
  readonly #options: ConnectionOptions;
  /** The thread this store's connection is open in, and the opening (a new thread opens it again). */
  #thread: WriterThread | undefined;
  #opened: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(location: string, options: ConnectionOptions) {
    this.#location = location;
    this.#options = options;
  }

  /** The writer thread, with this store's connection open (or opening) in it. */
  #open(): WriterThread {
    const current = writerThread();
    if (current !== this.#thread) {
      this.#thread = current;
      const opening = current.send({
        type: "open",
        store: this.#store,
        location: this.#location,
        options: this.#options,
      });
      // A failed open is reported by the call that waits for it; never left unhandled.
      opening.catch(() => {});
      this.#opened = opening;
    }
    return current;
  }

  async call<P extends ProcedureName>(procedure: P, args: ProcedureArgs<P>): Promise<ProcedureResult<P>> {
    if (this.#closed) {
      throw new WritError("internal", "the store is closed", {
        suggestedFix: "open a new store (SqliteStore.open) instead of reusing a closed one",
      });
    }
    const current = this.#open();
    await this.#opened;
    const value = await current.send({
      type: "call",
      store: this.#store,
      procedure,
      args,
    });
    // The writer thread ran `procedure` itself: its answer has the procedure's result type.
    return value as ProcedureResult<P>;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const current = this.#thread;
    if (current === undefined || current.stopped) return;
    await this.#opened.catch(() => {});
    await current.send({ type: "close", store: this.#store });
  }
}

// ------------------------------------------------------------------------------ the thread

let nextStore = 1;
let thread: WriterThread | undefined;

function writerThread(): WriterThread {
  if (thread === undefined || thread.stopped) thread = new WriterThread();
  return thread;
}

type Outgoing = ToWriter extends infer M ? (M extends { id: number } ? Omit<M, "id"> : never) : never;

class WriterThread {
  readonly #worker: Worker;
  readonly #pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  #nextId = 1;
  stopped = false;

  constructor() {
    this.#worker = startWorker();
    this.#worker.unref();
    this.#worker.on("message", (message: FromWriter) => this.#answer(message));
    this.#worker.on("error", (error) => this.#stop(error));
    this.#worker.on("exit", (code) => this.#stop(new Error(`the writer thread exited with code ${code}`)));
  }

  send(message: Outgoing): Promise<unknown> {
    if (this.stopped) return Promise.reject(stoppedError(new Error("the writer thread stopped")));
    const id = this.#nextId++;
    // While a write is in progress the thread keeps the process alive: it is never cut short.
    if (this.#pending.size === 0) this.#worker.ref();
    const answer = new Promise<unknown>((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    this.#worker.postMessage({ ...message, id });
    return answer;
  }

  #answer(message: FromWriter): void {
    const waiting = this.#pending.get(message.id);
    if (waiting === undefined) return;
    this.#pending.delete(message.id);
    if (this.#pending.size === 0) this.#worker.unref();
    if (message.ok) waiting.resolve(message.value);
    else waiting.reject(revivedError(message.error));
  }

  #stop(cause: Error): void {
    if (this.stopped) return;
    this.stopped = true;
    const error = stoppedError(cause);
    for (const waiting of this.#pending.values()) waiting.reject(error);
    this.#pending.clear();
  }
}

function stoppedError(cause: Error): WritError {
  return new WritError("backend_unavailable", `the store's writer thread stopped: ${cause.message}`, {
    retryable: true,
    effectCommitted: "unknown",
    suggestedFix:
      "retry; a new writer thread is started for the next write. If it keeps stopping, check the server log",
    cause,
  });
}

/** The worker: the compiled module beside this one, or the TypeScript source in a checkout. */
function startWorker(): Worker {
  const extension = import.meta.url.endsWith(".ts") ? "ts" : "js";
  return moduleWorker(new URL(`./sqlite-writer-worker.${extension}`, import.meta.url));
}
