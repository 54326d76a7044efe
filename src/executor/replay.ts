/**
 * Single use: a grant's `jti` may be consumed at most `max` times. `MemoryReplayCache` is the
 * local, in-process guard; a deployment with several executor replicas uses a shared guard (for
 * example central consumption through Writ) that implements the same interface.
 */

export interface ReplayGuard {
  /**
   * Records one use of `jti`. Resolves `true` when the use is allowed (fewer than `maxUses`
   * recorded so far), `false` when the grant is used up. `expiresAt` (seconds since the epoch) is
   * the last moment a verifier could still accept the grant; the record may be forgotten after it.
   */
  consume(jti: string, maxUses: number, expiresAt: number): Promise<boolean>;
}

export interface MemoryReplayCacheOptions {
  /** Most grants remembered at once (default 100 000). */
  maxEntries?: number;
  /** Milliseconds since the epoch; defaults to `Date.now`. */
  now?: () => number;
}

interface Use {
  uses: number;
  expiresAt: number;
}

/** A bounded in-memory `ReplayGuard`; entries are forgotten once their grant can no longer verify. */
export class MemoryReplayCache implements ReplayGuard {
  readonly #entries = new Map<string, Use>();
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: MemoryReplayCacheOptions = {}) {
    const maxEntries = options.maxEntries ?? 100_000;
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError(`maxEntries must be a positive integer, got ${maxEntries}`);
    }
    this.#maxEntries = maxEntries;
    this.#now = options.now ?? Date.now;
  }

  /** Grants currently remembered (including expired ones not swept yet). */
  get size(): number {
    return this.#entries.size;
  }

  async consume(jti: string, maxUses: number, expiresAt: number): Promise<boolean> {
    const now = this.#now() / 1000;
    const entry = this.#entries.get(jti);
    if (entry !== undefined && entry.expiresAt > now) {
      if (entry.uses >= maxUses) return false;
      entry.uses += 1;
      return true;
    }
    if (entry === undefined && this.#entries.size >= this.#maxEntries) {
      this.#sweep(now);
      if (this.#entries.size >= this.#maxEntries) {
        // Evicting a live entry would let its grant be replayed: refuse instead.
        throw new Error(
          `the replay cache is full (${this.#maxEntries} unexpired grants); raise maxEntries or use a shared replay guard`,
        );
      }
    }
    this.#entries.set(jti, { uses: 1, expiresAt });
    return maxUses >= 1;
  }

  #sweep(now: number): void {
    for (const [jti, entry] of this.#entries) {
      if (entry.expiresAt <= now) this.#entries.delete(jti);
    }
  }
}
