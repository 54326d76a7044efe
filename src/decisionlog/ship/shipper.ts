/**
 * Ships the decision log to an OPA-compatible decision-log service (issue 17). The log in the
 * store stays the source of truth: the shipper reads entries from the store in seq order from the
 * destination's cursor (the last seq it acknowledged, kept in the store), uploads them, and moves
 * the cursor only when the service answered 2xx. A failed upload (non-2xx, network error,
 * timeout) is retried forever with capped exponential back-off and jitter; nothing is dropped or
 * skipped, and a restart resumes from the stored cursor.
 *
 * Several instances on one store: only the holder of the destination's lease in the store ships
 * (the others look again each third of a lease, and take over once it lapses or is released).
 * One shipper keeps the service's events in seq order and needs one cursor; splitting entries
 * between instances would interleave them and need a cursor per instance and a rule for entries
 * an instance that left never shipped.
 */

import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { errorMessage, WritError } from "../../core/errors.ts";
import type { MetricsRecorder } from "../../observability/metrics.ts";
import type {
  DecisionLogEntry,
  DecisionStore,
  LogShippingClaim,
  LogShippingStore,
} from "../../store/types.ts";
import { type Batch, firstBatch, INITIAL_RATIO } from "./batch.ts";
import { UploadError, type UploadFailureReason, upload } from "./upload.ts";

/**
 * Entries read from the store for one upload: twice as many as the last upload held (the size
 * limit takes fewer), within these bounds.
 */
const MIN_READ = 64;
const MAX_READ = 1000;
/** Entries per store read (see `#read`). */
const READ_CHUNK = 100;

export interface ShipperOptions {
  store: DecisionStore & LogShippingStore;
  /** Where entries are POSTed (also the name of the destination's cursor in the store). */
  url: string;
  /** The headers of every upload (credentials resolved at each upload, so that rotation applies). */
  headers: () => Promise<Record<string, string>>;
  limitBytes: number;
  minDelayMs: number;
  maxDelayMs: number;
  timeoutMs: number;
  leaseMs: number;
  /** How long `close()` may keep uploading what is left. */
  flushMs: number;
  metrics?: Pick<MetricsRecorder, "logShipped" | "logShipFailures" | "logShipLag">;
  /** This instance's name in the lease (default: host, pid and a random suffix). */
  holder?: string;
  /** One line per failure streak, per recovery and per unfinished shutdown (default console.warn). */
  warn?: (line: string) => void;
  /** For back-off jitter (default Math.random). */
  random?: () => number;
}

/** What one step did: uploaded a batch, found nothing new, is not the lease holder, or failed. */
type Step = "shipped" | "idle" | "standby" | "failed";

/** Why a step failed: the failure metric's `reason` label. */
type FailureReason = UploadFailureReason | "credentials" | "store";

/**
 * The entries read from `first` on, up to the first gap. The chain has none: an entry missing at
 * `first` was deleted behind Writ's back, and shipping waits there (failing, so it is seen)
 * rather than skip it.
 */
function contiguousFrom(entries: readonly DecisionLogEntry[], first: number): DecisionLogEntry[] {
  const next = entries[0];
  if (next === undefined) return [];
  if (next.seq !== first) {
    throw new WritError(
      "internal",
      `the decision log has no entry at seq ${first} (the next one is seq ${next.seq}): entries were deleted`,
      {
        suggestedFix:
          "run `writ logs verify`, and restore the store from a backup; shipping waits at that seq",
      },
    );
  }
  let count = 1;
  while (entries[count]?.seq === first + count) count++;
  return entries.slice(0, count);
}

export class DecisionLogShipper {
  readonly #o: ShipperOptions;
  readonly #holder: string;
  readonly #warn: (line: string) => void;
  readonly #random: () => number;
  /** Aborts an upload when shutdown passed its flush bound. */
  readonly #abort = new AbortController();
  #running: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #stopping = false;
  #wake: () => void = () => {};
  /** Failed attempts in a row (0: the last one went through). */
  #streak = 0;
  #shipped = 0;
  /** The lease this instance holds (per its last claim or advance) and the cursor it moved. */
  #held: { cursor: number; until: number } | undefined;
  /** Starts small: a read blocks SQLite's event loop for as long as it parses its entries. */
  #readLimit = MIN_READ;
  /** The last batch's compression ratio: the first guess of the next. */
  #ratio = INITIAL_RATIO;
  /** The last entry warned about as larger than the size limit. */
  #oversizedSeq = 0;

  constructor(options: ShipperOptions) {
    this.#o = options;
    this.#holder = options.holder ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.#warn = options.warn ?? ((line) => console.warn(line));
    this.#random = options.random ?? Math.random;
  }

  /** Entries acknowledged by the service since this shipper started. */
  get shipped(): number {
    return this.#shipped;
  }

  /** Starts shipping in the background (until `close()`). */
  start(): void {
    this.#running ??= this.#run().catch((error: unknown) => {
      this.#warn(`decision log shipping to ${this.#o.url} stopped: ${errorMessage(error)}`);
    });
  }

  /**
   * Stops shipping: uploads what is left for at most `flushMs` (an upload still running then is
   * aborted), says how many entries are left for the next start, and releases the lease so that
   * another instance takes over at once. Call after the log drained, before the store closes.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#stopping = true;
    this.#wake();
    this.start();
    const bound = setTimeout(() => this.#abort.abort(), this.#o.flushMs);
    try {
      await this.#running;
    } finally {
      clearTimeout(bound);
    }
    try {
      const [state, head] = await Promise.all([
        this.#o.store.logShipping(this.#o.url),
        this.#o.store.decisionHead(),
      ]);
      const left = (head?.seq ?? 0) - (state?.shipped_seq ?? 0);
      if (left > 0 && state?.holder === this.#holder) {
        this.#warn(
          `decision log shipping to ${this.#o.url}: stopped with ${left} entries not shipped yet (from seq ${(state?.shipped_seq ?? 0) + 1}); they are shipped after the next start`,
        );
      }
      await this.#o.store.releaseLogShipping(this.#o.url, this.#holder);
    } catch (error) {
      this.#warn(
        `decision log shipping to ${this.#o.url}: could not release its lease: ${errorMessage(error)}`,
      );
    }
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      const step = await this.#step();
      if (step !== "shipped") await this.#sleep(this.#delayAfter(step));
    }
    // Shutdown: what is left, until caught up, a failure, or the flush bound.
    let step: Step;
    do step = await this.#step();
    while (step === "shipped" && !this.#abort.signal.aborted);
  }

  /** Takes or renews the lease, and uploads the next batch when there is one. */
  async #step(): Promise<Step> {
    const { url } = this.#o;
    let phase: FailureReason = "store";
    let acknowledged = 0;
    try {
      const claim = await this.#claim();
      if (!claim.held) return "standby";
      const from = claim.shipped_seq + 1;
      const entries = contiguousFrom(await this.#read(from), from);
      if (entries.length === 0) return "idle";
      const batch = await firstBatch(entries, this.#o.limitBytes, this.#ratio);
      this.#ratio = batch.ratio;
      this.#readLimit = Math.min(MAX_READ, Math.max(MIN_READ, 2 * batch.count));
      this.#warnOversized(batch);
      phase = "credentials";
      const headers = await this.#o.headers();
      await upload({
        url,
        body: batch.body,
        headers,
        timeoutMs: this.#o.timeoutMs,
        signal: this.#abort.signal,
      });
      acknowledged = batch.count;
      phase = "store";
      return (await this.#acknowledge(batch, claim.head)) ? "shipped" : "standby";
    } catch (error) {
      // Asks the store again at the next attempt.
      this.#held = undefined;
      if (this.#abort.signal.aborted) return "failed";
      this.#failed(error instanceof UploadError ? error.reason : phase, error, acknowledged);
      return "failed";
    }
  }

  /**
   * Up to `#readLimit` entries from seq `from`, read in short chunks with other work let in
   * between: SQLite reads parse their entries on the event loop (~0.1 ms each).
   */
  async #read(from: number): Promise<DecisionLogEntry[]> {
    const entries: DecisionLogEntry[] = [];
    let next = from;
    while (entries.length < this.#readLimit) {
      const size = Math.min(READ_CHUNK, this.#readLimit - entries.length);
      const chunk = await this.#o.store.readDecisions(next, size);
      entries.push(...chunk);
      const last = chunk.at(-1);
      if (last === undefined || chunk.length < size) break;
      next = last.seq + 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return entries;
  }

  /** Takes or renews the lease; the lag (head − cursor) is reported by every instance. */
  async #claim(): Promise<LogShippingClaim & { head: number }> {
    const now = Date.now();
    const { store, url, leaseMs } = this.#o;
    // While more than half of its lease is left, the holder knows the cursor (only it moves it)
    // and writes nothing to the store just to look for new entries.
    const held = this.#held;
    let claim: LogShippingClaim;
    if (held !== undefined && now < held.until - leaseMs / 2)
      claim = { held: true, shipped_seq: held.cursor };
    else {
      claim = await store.claimLogShipping(url, this.#holder, new Date(now + leaseMs), new Date(now));
      this.#held = claim.held ? { cursor: claim.shipped_seq, until: now + leaseMs } : undefined;
    }
    const head = (await store.decisionHead())?.seq ?? 0;
    this.#o.metrics?.logShipLag.set(Math.max(0, head - claim.shipped_seq));
    return { ...claim, head };
  }

  /** Moves the cursor past an acknowledged batch; false when another instance took the lease over. */
  async #acknowledge(batch: Batch, head: number): Promise<boolean> {
    const { store, url, leaseMs } = this.#o;
    const until = Date.now() + leaseMs;
    this.#held = undefined;
    // Lost: the new holder ships from the stored cursor, so this batch may reach the service
    // twice (its events carry their decision_id).
    if (!(await store.advanceLogShipping(url, this.#holder, batch.lastSeq, new Date(until)))) return false;
    this.#held = { cursor: batch.lastSeq, until };
    this.#o.metrics?.logShipped.inc({}, batch.count);
    this.#o.metrics?.logShipLag.set(Math.max(0, head - batch.lastSeq));
    this.#shipped += batch.count;
    if (this.#streak > 0) {
      this.#warn(`decision log shipping to ${url}: recovered after ${this.#streak} failed attempts`);
      this.#streak = 0;
    }
    return true;
  }

  /** Says once per entry that it is sent alone above the size limit. */
  #warnOversized(batch: Batch): void {
    if (!batch.oversized || this.#oversizedSeq === batch.lastSeq) return;
    this.#oversizedSeq = batch.lastSeq;
    this.#warn(
      `decision log shipping to ${this.#o.url}: entry seq ${batch.lastSeq} is ${batch.body.length} bytes gzipped, above upload_size_limit_bytes (${this.#o.limitBytes}); it is sent alone`,
    );
  }

  /** Counts a failure; warns on the first of a streak only. */
  #failed(reason: FailureReason, error: unknown, acknowledged: number): void {
    this.#o.metrics?.logShipFailures.inc({ reason });
    this.#streak++;
    if (this.#streak > 1) return;
    const what = {
      status: "an upload failed",
      network: "an upload failed",
      timeout: "an upload failed",
      credentials: "its credentials could not be read",
      store: `the store failed${acknowledged > 0 ? ` after ${acknowledged} entries were acknowledged (they are sent again)` : ""}`,
    }[reason];
    this.#warn(
      `decision log shipping to ${this.#o.url}: ${what} (${errorMessage(error)}); retrying with back-off up to ${this.#o.maxDelayMs} ms, the entries stay in the log`,
    );
  }

  #delayAfter(step: Exclude<Step, "shipped">): number {
    const { minDelayMs, maxDelayMs, leaseMs } = this.#o;
    if (step === "idle") return minDelayMs;
    if (step === "standby") return leaseMs / 3;
    // Exponential from min_delay, capped at max_delay; half of it fixed, half random ("equal jitter").
    const cap = Math.min(maxDelayMs, minDelayMs * 2 ** Math.min(this.#streak - 1, 30));
    return cap / 2 + (this.#random() * cap) / 2;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      // The server keeps the process alive; a forgotten shipper does not.
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }
}
