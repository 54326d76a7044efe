/**
 * The verified-token cache: a caller that reuses its bearer token pays signature verification
 * once. Entries are keyed by a SHA-256 of the token (the token itself is never stored), live
 * until the token's `exp` (never longer, and not before its `nbf`), are bounded in number (least
 * recently used first out), and are never served past a key rotation: each entry remembers which
 * key verified it and the key-set version it was last checked against (see keys.ts).
 */
import { hash } from "node:crypto";
import type { Subject } from "../core/types.ts";
import type { KeyIdentity, KeySource } from "./keys.ts";

export interface CachedVerification {
  subject: Subject;
  /** Seconds since the epoch: the entry is served while `notBefore <= now < expiresAt`. */
  notBefore: number;
  expiresAt: number;
  source: KeySource;
  key: KeyIdentity;
  /** Key-set version the key was last known to be in. */
  version: unknown;
}

export interface TokenCacheStats {
  /** Verifications answered from the cache. */
  hits: number;
  /** Verifications that ran jose (no entry, or an entry that could not be served). */
  misses: number;
  /** Entries dropped because their key left (or changed in) the issuer's key set. */
  invalidations: number;
  /** Entries dropped because their token expired. */
  expirations: number;
  /** Entries dropped to stay within `max_entries`. */
  evictions: number;
  size: number;
}

export function tokenCacheKey(token: string): string {
  return hash("sha256", token, "base64url");
}

export class VerifiedTokenCache {
  readonly #entries = new Map<string, CachedVerification>();
  readonly #maxEntries: number;
  #hits = 0;
  #misses = 0;
  #invalidations = 0;
  #expirations = 0;
  #evictions = 0;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  /** The cached subject for this token, or `undefined` (counted as a miss). */
  async lookup(key: string, nowSeconds: number): Promise<Subject | undefined> {
    const entry = this.#entries.get(key);
    if (entry === undefined) return this.#miss();
    if (nowSeconds >= entry.expiresAt || nowSeconds < entry.notBefore) {
      this.#entries.delete(key);
      if (nowSeconds >= entry.expiresAt) this.#expirations += 1;
      return this.#miss();
    }
    let version = entry.source.freshVersion();
    if (version === undefined) {
      try {
        version = await entry.source.refresh();
      } catch {
        // The key set cannot be refreshed: let the full verification decide (and report it).
        return this.#miss();
      }
    }
    if (version !== entry.version) {
      if (!(await entry.source.holds(entry.key, version))) {
        this.#entries.delete(key);
        this.#invalidations += 1;
        return this.#miss();
      }
      entry.version = version;
    }
    // Most recently used goes last.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    this.#hits += 1;
    return entry.subject;
  }

  store(key: string, entry: CachedVerification): void {
    if (this.#maxEntries === 0) return;
    this.#entries.delete(key);
    while (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.#entries.delete(oldest.value);
      this.#evictions += 1;
    }
    this.#entries.set(key, entry);
  }

  stats(): TokenCacheStats {
    return {
      hits: this.#hits,
      misses: this.#misses,
      invalidations: this.#invalidations,
      expirations: this.#expirations,
      evictions: this.#evictions,
      size: this.#entries.size,
    };
  }

  clear(): void {
    this.#entries.clear();
  }

  #miss(): undefined {
    this.#misses += 1;
    return undefined;
  }
}
