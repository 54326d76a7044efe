/**
 * Cancelling a running `tools/call` from another POST. `/mcp` keeps no session, so a caller's
 * `notifications/cancelled` arrives in a request of its own, possibly at another instance than the
 * one running the call. Calls are known by tenant, subject and JSON-RPC id (a caller can cancel
 * only its own calls). An instance that runs the call cancels it at once; any other records the
 * request in the store, and the running instance, which polls the store while it has calls
 * running, cancels it there.
 */
import type { Subject } from "../core/types.ts";
import type { CancellationStore } from "../store/types.ts";

type Cancel = (reason: string | undefined) => void;

export interface CancellableCallsOptions {
  /** How often an instance with running calls looks for cancellations others recorded. */
  pollMs?: number;
  /** How long a recorded cancellation waits for its call. */
  keepMs?: number;
  /** Where a failure to read or record cancellations is reported (default console.error). */
  report?: (message: string) => void;
}

export class CancellableCalls {
  readonly #calls = new Map<string, Cancel>();
  readonly #store: CancellationStore;
  readonly #pollMs: number;
  readonly #keepMs: number;
  readonly #report: (message: string) => void;
  #timer: NodeJS.Timeout | undefined;
  #polling = false;

  constructor(store: CancellationStore, options: CancellableCallsOptions = {}) {
    this.#store = store;
    this.#pollMs = options.pollMs ?? 250;
    this.#keepMs = options.keepMs ?? 10 * 60_000;
    this.#report = options.report ?? ((message) => console.error(message));
  }

  static #key(subject: Subject, id: string | number): string {
    return JSON.stringify([subject.tenant, subject.id, id]);
  }

  /** Registers a running call; the returned function forgets it once it ended. */
  add(subject: Subject, id: string | number, cancel: Cancel): () => void {
    const key = CancellableCalls.#key(subject, id);
    this.#calls.set(key, cancel);
    this.#timer ??= setInterval(() => void this.#poll(), this.#pollMs).unref();
    return () => {
      if (this.#calls.get(key) === cancel) this.#calls.delete(key);
      if (this.#calls.size === 0 && this.#timer !== undefined) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
  }

  /** A caller's cancellation: here when the call runs here, else through the store. */
  async cancel(subject: Subject, id: string | number, reason: string | undefined): Promise<void> {
    const key = CancellableCalls.#key(subject, id);
    const local = this.#calls.get(key);
    if (local !== undefined) {
      local(reason);
      return;
    }
    await this.#store
      .requestCancellation(key, reason, new Date(Date.now() + this.#keepMs))
      .catch((error: unknown) => this.#report(`mcp: recording a cancellation failed: ${String(error)}`));
  }

  async #poll(): Promise<void> {
    if (this.#polling || this.#calls.size === 0) return;
    this.#polling = true;
    try {
      const found = await this.#store.requestedCancellations([...this.#calls.keys()]);
      for (const [key, reason] of found) this.#calls.get(key)?.(reason);
    } catch (error) {
      this.#report(`mcp: reading cancellations failed: ${String(error)}`);
    } finally {
      this.#polling = false;
    }
  }
}
