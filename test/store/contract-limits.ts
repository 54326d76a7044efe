/**
 * The `Store` contract, continued: the buckets of limits. A charge of several buckets is all or
 * nothing; a bucket drains at its rate; two stores on one database never let more through than a
 * bucket holds.
 */
import { describe, expect, it } from "vitest";
import type { LimitCharge } from "../../src/store/types.ts";
import { expectWritError, type StoreHarness } from "./contract.ts";

const T0 = new Date("2030-01-01T00:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);

/** 3 per 30 s: drains one every 10 s. */
const calls = (key: string): LimitCharge => ({ key, cost: 1, capacity: 3, drainPerSecond: 0.1 });

export function limitContract(h: StoreHarness): void {
  describe("limit buckets", () => {
    it("charges until a bucket is full, then refuses without writing; it drains over time", async () => {
      const store = await h.open();
      expect(await store.limitUsage([calls("a")], T0)).toEqual([0]);
      for (let i = 1; i <= 3; i++) {
        expect(await store.consumeLimits([calls("a")], T0)).toEqual({ ok: true, used: [i] });
      }
      expect(await store.consumeLimits([calls("a")], T0)).toEqual({ ok: false, used: [3], over: [0] });
      expect(await store.limitUsage([calls("a")], T0)).toEqual([3]);
      // 10 s later one call drained out: one more fits.
      expect(await store.limitUsage([calls("a")], at(10_000))).toEqual([2]);
      expect(await store.consumeLimits([calls("a")], at(10_000))).toEqual({ ok: true, used: [3] });
      expect((await store.consumeLimits([calls("a")], at(10_000))).ok).toBe(false);
    });

    it("charges several buckets all or nothing", async () => {
      const store = await h.open();
      const value: LimitCharge = { key: "v", cost: 60, capacity: 100, drainPerSecond: 0 };
      expect(await store.consumeLimits([calls("b"), value], T0)).toEqual({ ok: true, used: [1, 60] });
      // 60 + 50 > 100: refused, and the call bucket is not charged either.
      const refused = await store.consumeLimits([calls("b"), { ...value, cost: 50 }], T0);
      expect(refused).toEqual({ ok: false, used: [1, 60], over: [1] });
      expect(await store.limitUsage([calls("b"), value], T0)).toEqual([1, 60]);
      expect(await store.consumeLimits([calls("b"), { ...value, cost: 40 }], T0)).toEqual({
        ok: true,
        used: [2, 100],
      });
      // A step budget (no drain) stays full.
      expect(await store.limitUsage([value], at(86_400_000))).toEqual([100]);
    });

    it("a store whose clock is behind drains nothing and moves no bucket back", async () => {
      const store = await h.open();
      await store.consumeLimits([calls("skew"), calls("skew-2")], at(20_000));
      await store.consumeLimits([calls("skew")], at(20_000));
      // 10 s behind: still 2 used; charged as of the row's time, not 10 s earlier.
      expect(await store.consumeLimits([calls("skew")], at(10_000))).toEqual({ ok: true, used: [3] });
      expect(await store.limitUsage([calls("skew")], at(20_000))).toEqual([3]);
      expect(await store.limitUsage([calls("skew")], at(30_000))).toEqual([2]);
    });

    it("refuses malformed charges", async () => {
      const store = await h.open();
      await expectWritError(store.consumeLimits([calls("c"), calls("c")], T0), "invalid_argument");
      await expectWritError(store.consumeLimits([{ ...calls("c"), cost: -1 }], T0), "invalid_argument");
      await expectWritError(
        store.consumeLimits([{ ...calls("c"), cost: Number.NaN }], T0),
        "invalid_argument",
      );
      expect(await store.limitUsage([calls("c")], T0)).toEqual([0]);
    });

    it("two stores on one database let exactly the bucket's size through", async () => {
      const a = await h.open();
      const b = await h.openSame();
      const bucket: LimitCharge = { key: "race", cost: 1, capacity: 7, drainPerSecond: 0 };
      const other: LimitCharge = { key: "race-2", cost: 1, capacity: 100, drainPerSecond: 0 };
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 === 0 ? a : b).consumeLimits(i % 3 === 0 ? [bucket, other] : [other, bucket], T0),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(7);
      // Only the calls that went through charged the other bucket.
      expect(await b.limitUsage([bucket, other], T0)).toEqual([7, 7]);
    });
  });
}
