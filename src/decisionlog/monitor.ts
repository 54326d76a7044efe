/**
 * Keeping the chain's status at hand without walking the whole log on every look (the console
 * shows it on every page; a full walk costs about 20 µs per entry, 20 s for a million).
 *
 * - The first look, and any look once `fullEveryMs` has passed, walks the whole log.
 * - Other looks walk only the entries appended since the verified prefix ended, checking that
 *   the first of them links to the prefix's last hash.
 * - `checkEntries` re-hashes entries a page is about to show; any that does not match its hash
 *   triggers a full walk at once, so an edited entry never shows as trustworthy.
 * - A break stays reported until a full walk finds the chain intact again.
 * Concurrent looks share one walk.
 */
import type { DecisionLogEntry } from "../store/types.ts";
import { hashEntry } from "./hash.ts";
import type { AuditLog, VerifyResult } from "./log.ts";

export interface ChainStatus {
  result: VerifyResult;
  /** When the whole log was last walked (ISO 8601). */
  full_checked_at: string;
}

export interface ChainMonitorOptions {
  /** How often the whole log is walked again (default 5 minutes). */
  fullEveryMs?: number;
  /** Milliseconds since the epoch; defaults to `Date.now`. */
  clock?: () => number;
}

export const DEFAULT_FULL_CHECK_MS = 5 * 60_000;

export class ChainMonitor {
  readonly #log: Pick<AuditLog, "verify">;
  readonly #fullEveryMs: number;
  readonly #clock: () => number;
  #verified: { seq: number; hash: string } | undefined;
  #broken: VerifyResult | undefined;
  #fullAt = Number.NEGATIVE_INFINITY;
  #walking: Promise<ChainStatus> | undefined;

  constructor(log: Pick<AuditLog, "verify">, options: ChainMonitorOptions = {}) {
    this.#log = log;
    this.#fullEveryMs = options.fullEveryMs ?? DEFAULT_FULL_CHECK_MS;
    this.#clock = options.clock ?? Date.now;
  }

  /** The chain's status: a full walk when one is due, else the entries since the last look. */
  status(): Promise<ChainStatus> {
    return this.#shared(async () => {
      if (this.#clock() - this.#fullAt >= this.#fullEveryMs) return this.#full();
      if (this.#broken) return this.#view(this.#broken);
      return this.#record(await this.#log.verify(this.#verified ? { after: this.#verified } : {}));
    });
  }

  /** Walks the whole log now. */
  recheck(): Promise<ChainStatus> {
    return this.#shared(() => this.#full());
  }

  /**
   * The status for a page showing `entries`: each is re-hashed first, and one that no longer
   * matches its hash makes this a full walk.
   */
  async checkEntries(entries: Iterable<DecisionLogEntry>): Promise<ChainStatus> {
    for (const entry of entries) {
      if (hashEntry(entry) !== entry.hash) return this.recheck();
    }
    return this.status();
  }

  async #full(): Promise<ChainStatus> {
    const result = await this.#log.verify();
    this.#fullAt = this.#clock();
    this.#broken = undefined;
    this.#verified = undefined;
    return this.#record(result);
  }

  #record(result: VerifyResult): ChainStatus {
    if (result.ok) this.#verified = { seq: result.entries, hash: result.head_hash };
    else this.#broken = result;
    return this.#view(result);
  }

  #view(result: VerifyResult): ChainStatus {
    return { result, full_checked_at: new Date(this.#fullAt).toISOString() };
  }

  #shared(walk: () => Promise<ChainStatus>): Promise<ChainStatus> {
    // A look while another walk runs waits for it, then decides afresh (the log may have grown).
    const previous = this.#walking ?? Promise.resolve(undefined);
    const next = previous.then(walk, walk).finally(() => {
      if (this.#walking === next) this.#walking = undefined;
    });
    this.#walking = next;
    return next;
  }
}
