import { describe, expect, it } from "vitest";
import { MemoryReplayCache } from "../../src/executor/index.ts";

describe("MemoryReplayCache", () => {
  it("allows a grant up to its number of uses", async () => {
    const cache = new MemoryReplayCache();
    const exp = Date.now() / 1000 + 60;
    expect(await cache.consume("a", 1, exp)).toBe(true);
    expect(await cache.consume("a", 1, exp)).toBe(false);
    expect(await cache.consume("b", 2, exp)).toBe(true);
    expect(await cache.consume("b", 2, exp)).toBe(true);
    expect(await cache.consume("b", 2, exp)).toBe(false);
  });

  it("forgets a grant once it expired, and makes room from expired entries when full", async () => {
    let now = 1_000_000_000_000;
    const cache = new MemoryReplayCache({ maxEntries: 2, now: () => now });
    const t = now / 1000;
    await cache.consume("a", 1, t + 10);
    await cache.consume("b", 1, t + 100);
    await expect(cache.consume("c", 1, t + 100)).rejects.toThrow(/replay cache is full .* raise maxEntries/);
    now += 11_000;
    expect(await cache.consume("c", 1, t + 100)).toBe(true);
    expect(cache.size).toBe(2);
    // b is still remembered: a live entry is never evicted to make room.
    expect(await cache.consume("b", 1, t + 100)).toBe(false);
  });

  it("rejects a nonsensical bound", () => {
    expect(() => new MemoryReplayCache({ maxEntries: 0 })).toThrow(/positive integer/);
  });
});
