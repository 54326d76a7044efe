/**
 * Concurrency groups (a contract's `concurrency_group`): calls of one group never overlap while
 * they run (stage 9, from the grant's check to the backend's answer). In this process a group is
 * a FIFO lock; a committing call also holds the group's lease in the store
 * (`GroupLeaseStore.claimGroupLease`), so committing calls of one group do not overlap across instances
 * either. The lease is renewed while the call runs and taken over once expired, so an instance
 * that crashed blocks its groups for one lease at most.
 *
 * Waiting is bounded (the contract's `timeout_ms`, at most `group_max_wait_ms`): past it the call
 * fails with a retryable `conflict`, before its grant is used or its backend called.
 */
import { randomUUID } from "node:crypto";
import type { ToolContract } from "../contracts/index.ts";
import { WritError } from "../core/errors.ts";
import type { MetricsRecorder } from "../observability/metrics.ts";
import type { GroupLeaseStore } from "../store/types.ts";

/** A turn in a group: released once the call ended (whatever its outcome). */
export interface GroupTurn {
  release(): Promise<void>;
}

export interface ConcurrencyGroupsOptions {
  store: GroupLeaseStore;
  metrics: Pick<MetricsRecorder, "groupWaiting" | "groupRunning" | "groupWaits" | "groupWaitSeconds">;
  maxWaitMs: number;
  leaseMs: number;
}

interface Waiter {
  admit(): void;
}

/** One group in this process: whether a call runs, and who waits for it, in order. */
interface LocalGroup {
  /** A call has the group (running, or claiming its lease). */
  busy: boolean;
  queue: Waiter[];
  /** Calls waiting for their turn (in line, or claiming the lease), for the gauge. */
  waiting: number;
  /** Calls that have their turn (0 or 1), for the gauge. */
  running: number;
}

/**
 * Waits between two claims of a lease another instance holds: doubling, at most this. Only the
 * first call in line in each instance claims: at most twenty claims a second per instance and group.
 */
const MAX_POLL_MS = 50;

export class ConcurrencyGroups {
  readonly #o: ConcurrencyGroupsOptions;
  readonly #groups = new Map<string, LocalGroup>();
  /** This process's part of every lease holder's name. */
  readonly #instance = randomUUID();
  #turns = 0;

  constructor(options: ConcurrencyGroupsOptions) {
    this.#o = options;
  }

  /**
   * Waits for the turn of `contract`'s group; throws a retryable `conflict` once the wait is
   * over its bound, and stops waiting when `signal` aborts (the caller cancelled the call). The
   * caller releases the turn when the call ended.
   */
  async enter(contract: ToolContract, group: string, signal?: AbortSignal): Promise<GroupTurn> {
    const started = performance.now();
    const deadline = started + Math.min(contract.timeout_ms, this.#o.maxWaitMs);
    const local = this.#local(group);
    local.waiting += 1;
    this.#gauges(group, local);
    let waited = false;
    let holder: string | undefined;
    try {
      if (local.busy) {
        waited = true;
        await this.#queue(local, deadline, signal);
      }
      local.busy = true;
      if (contract.side_effect === "committing") {
        holder = `${this.#instance}/${++this.#turns}`;
        try {
          waited = (await this.#lease(group, holder, deadline, signal)) || waited;
        } catch (error) {
          this.#next(group, local);
          throw error;
        }
      }
    } catch (error) {
      if (!(error instanceof Stopped)) throw error;
      this.#waited(group, started, error.why);
      throw error.why === "timed_out"
        ? busy(contract, group, performance.now() - started)
        : cancelled(contract, group);
    } finally {
      local.waiting -= 1;
      this.#gauges(group, local);
    }
    local.running += 1;
    this.#gauges(group, local);
    this.#waited(group, started, waited ? "ran" : undefined);
    const renewal = holder === undefined ? undefined : this.#renew(group, holder);
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        // A renewal still on its way would put the lease back after the release below.
        if (renewal !== undefined) await renewal.stop();
        local.running -= 1;
        if (holder !== undefined) {
          // A lease that cannot be given up expires on its own; the next call waits for that.
          await this.#o.store.releaseGroupLease(group, holder).catch((error: unknown) => {
            console.error(`concurrency group ${group}: releasing its lease failed: ${String(error)}`);
          });
        }
        this.#next(group, local);
      },
    };
  }

  #local(group: string): LocalGroup {
    let local = this.#groups.get(group);
    if (local === undefined) {
      local = { busy: false, queue: [], waiting: 0, running: 0 };
      this.#groups.set(group, local);
    }
    return local;
  }

  /** Waits in line until admitted, or rejects with Stopped at `deadline` or when `signal` aborts. */
  #queue(local: LocalGroup, deadline: number, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(new Stopped("cancelled"));
    return new Promise<void>((resolve, reject) => {
      const leave = (why: Stopped["why"]) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        local.queue.splice(local.queue.indexOf(waiter), 1);
        reject(new Stopped(why));
      };
      const onAbort = () => leave("cancelled");
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const timer = setTimeout(() => leave("timed_out"), Math.max(0, deadline - performance.now()));
      signal?.addEventListener("abort", onAbort, { once: true });
      local.queue.push(waiter);
    });
  }

  /** Hands the group to the next call in line, or frees it. */
  #next(group: string, local: LocalGroup): void {
    const next = local.queue.shift();
    if (next !== undefined) next.admit();
    else local.busy = false;
    this.#gauges(group, local);
  }

  /** Claims the group's lease until it has it (true when it had to wait), or Stopped. */
  async #lease(
    group: string,
    holder: string,
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    let pause = 5;
    for (let attempt = 0; ; attempt++) {
      const now = Date.now();
      if (
        await this.#o.store.claimGroupLease(group, holder, new Date(now + this.#o.leaseMs), new Date(now))
      ) {
        return attempt > 0;
      }
      if (signal?.aborted) throw new Stopped("cancelled");
      const left = deadline - performance.now();
      if (left <= 0) throw new Stopped("timed_out");
      // Jittered, so that instances waiting for one group do not claim in lockstep.
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, pause * (0.5 + Math.random()))));
      pause = Math.min(pause * 2, MAX_POLL_MS);
    }
  }

  /** Renews the lease every third of its length while the call runs; `stop` once it ended. */
  #renew(group: string, holder: string): { stop(): Promise<void> } {
    let renewing: Promise<void> = Promise.resolve();
    const timer = setInterval(() => {
      const now = Date.now();
      renewing = this.#o.store
        .claimGroupLease(group, holder, new Date(now + this.#o.leaseMs), new Date(now))
        .then(
          (held) => {
            if (!held)
              console.error(`concurrency group ${group}: its lease expired while ${holder} ran a call`);
          },
          (error: unknown) =>
            console.error(`concurrency group ${group}: renewing its lease failed: ${String(error)}`),
        );
    }, this.#o.leaseMs / 3);
    timer.unref();
    return {
      stop: () => {
        clearInterval(timer);
        return renewing;
      },
    };
  }

  #gauges(group: string, local: LocalGroup): void {
    this.#o.metrics.groupWaiting.set(local.waiting, { group });
    this.#o.metrics.groupRunning.set(local.running, { group });
  }

  #waited(group: string, started: number, result: "ran" | Stopped["why"] | undefined): void {
    const seconds = (performance.now() - started) / 1000;
    this.#o.metrics.groupWaitSeconds.observe(seconds, { group });
    if (result !== undefined) this.#o.metrics.groupWaits.inc({ group, result });
  }
}

/** The wait ended without a turn: past its bound, or cancelled (turned into WritErrors by `enter`). */
class Stopped extends Error {
  constructor(readonly why: "timed_out" | "cancelled") {
    super(why);
  }
}

function busy(contract: ToolContract, group: string, waitedMs: number): WritError {
  return new WritError(
    "conflict",
    `${contract.name} waited ${Math.round(waitedMs)} ms for its concurrency group ${group}, where another call was still running`,
    {
      suggestedFix:
        "retry in a moment: the call did not run and its grant was not used (send it again to POST /v1/execute while the grant is valid, or propose the call again)",
      retryable: true,
      effectCommitted: false,
    },
  );
}

function cancelled(contract: ToolContract, group: string): WritError {
  return new WritError(
    "timeout",
    `${contract.name} was cancelled by the caller while it waited for its concurrency group ${group}`,
    {
      suggestedFix: "call again if you still need it: the call did not run and its grant was not used",
      retryable: true,
      effectCommitted: false,
    },
  );
}
