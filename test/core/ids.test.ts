/** Ids stored under indexes: version 7 UUIDs (RFC 9562), ordered by their time, random otherwise. */
import { describe, expect, it } from "vitest";
import { timeOrderedUuid } from "../../src/core/ids.ts";

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("timeOrderedUuid", () => {
  it("is a version 7 UUID whose first 48 bits are the time in milliseconds", () => {
    const at = Date.parse("2026-12-02T21:00:00.123Z");
    const id = timeOrderedUuid(at);
    expect(id).toMatch(V7);
    expect(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
    expect(timeOrderedUuid()).toMatch(V7);
  });

  it("sorts ids of later times after earlier ones, and never repeats one", () => {
    const start = Date.parse("2026-01-01T00:00:00Z");
    const ids = Array.from({ length: 2000 }, (_, i) => timeOrderedUuid(start + i * 7));
    expect([...ids].sort()).toEqual(ids);
    const sameMillisecond = Array.from({ length: 10_000 }, () => timeOrderedUuid(start));
    expect(new Set(sameMillisecond).size).toBe(10_000);
  });

  it("keeps 74 random bits: ids of one millisecond differ beyond the time and version", () => {
    const ids = Array.from({ length: 200 }, () => timeOrderedUuid(0));
    const tails = new Set(ids.map((id) => id.slice(15)));
    expect(tails.size).toBe(200);
    expect(ids.every((id) => id.startsWith("00000000-0000-7"))).toBe(true);
  });
});
