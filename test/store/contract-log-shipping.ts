/**
 * The `Store` contract, continued: decision-log shipping's cursor (per destination, never moving
 * back) and its lease (one holder at a time, taken over once expired or released, and a holder
 * that lost it cannot move the cursor).
 */
import { describe, expect, it } from "vitest";
import { expectWritError, type StoreHarness } from "./contract.ts";

const T0 = new Date("2030-01-01T00:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);

export function logShippingContract(h: StoreHarness): void {
  describe("log shipping", () => {
    it("a new destination starts at 0; the holder moves its cursor forward only", async () => {
      const store = await h.open();
      expect(await store.logShipping("https://a.test/logs")).toBeUndefined();
      expect(await store.claimLogShipping("https://a.test/logs", "i1", at(1000), T0)).toEqual({
        held: true,
        shipped_seq: 0,
      });
      expect(await store.advanceLogShipping("https://a.test/logs", "i1", 5, at(2000))).toBe(true);
      expect(await store.advanceLogShipping("https://a.test/logs", "i1", 3, at(2000))).toBe(true);
      const state = await store.logShipping("https://a.test/logs");
      expect(state).toEqual({ shipped_seq: 5, holder: "i1", lease_until: at(2000) });
      // Another destination has its own cursor.
      expect(await store.claimLogShipping("https://b.test/logs", "i1", at(1000), T0)).toEqual({
        held: true,
        shipped_seq: 0,
      });
      await expectWritError(
        store.advanceLogShipping("https://a.test/logs", "i1", -1, at(1)),
        "invalid_argument",
      );
      await expectWritError(store.claimLogShipping("", "i1", at(1), T0), "invalid_argument");
    });

    it("one holder at a time: another instance takes over once the lease expired or was released", async () => {
      const first = await h.open();
      const second = await h.openSame();
      const target = "https://logs.test/logs";
      expect((await first.claimLogShipping(target, "i1", at(1000), T0)).held).toBe(true);
      await first.advanceLogShipping(target, "i1", 7, at(1000));
      // While i1's lease runs, i2 sees the cursor but does not get the lease.
      expect(await second.claimLogShipping(target, "i2", at(1500), at(500))).toEqual({
        held: false,
        shipped_seq: 7,
      });
      expect(await second.advanceLogShipping(target, "i2", 9, at(1500))).toBe(false);
      // Renewing is the holder's own claim.
      expect((await first.claimLogShipping(target, "i1", at(3000), at(900))).held).toBe(true);
      // Expired: i2 takes over, and i1 can no longer move the cursor.
      expect(await second.claimLogShipping(target, "i2", at(5000), at(3000))).toEqual({
        held: true,
        shipped_seq: 7,
      });
      expect(await first.advanceLogShipping(target, "i1", 8, at(6000))).toBe(false);
      expect((await first.claimLogShipping(target, "i1", at(6000), at(3100))).held).toBe(false);
      // Released: i1 takes it back at once.
      await second.releaseLogShipping(target, "i2");
      expect((await first.claimLogShipping(target, "i1", at(6000), at(3200))).held).toBe(true);
      expect((await first.logShipping(target))?.shipped_seq).toBe(7);
    });

    it("two instances claiming at once: exactly one gets the lease", async () => {
      const first = await h.open();
      const second = await h.openSame();
      const target = "https://race.test/logs";
      const claims = await Promise.all([
        first.claimLogShipping(target, "i1", at(1000), T0),
        second.claimLogShipping(target, "i2", at(1000), T0),
      ]);
      expect(claims.filter((c) => c.held)).toHaveLength(1);
    });
  });
}
