/**
 * The `Store` contract, continued: concurrency-group leases (one holder per group at a time,
 * renewed by its holder, taken over once expired, released by its holder only), also between
 * two stores on one database racing for the same group.
 */
import { describe, expect, it } from "vitest";
import { expectWritError, type StoreHarness } from "./contract.ts";

const T0 = new Date("2030-01-01T00:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);

export function groupLeaseContract(h: StoreHarness): void {
  describe("concurrency group leases", () => {
    it("one holder at a time: renewed by it, taken over once expired, given up by its holder only", async () => {
      const store = await h.open();
      expect(await store.claimGroupLease("ledger", "a", at(1000), T0)).toBe(true);
      // Another holder waits while the lease runs; another group is free.
      expect(await store.claimGroupLease("ledger", "b", at(1500), at(500))).toBe(false);
      expect(await store.claimGroupLease("payments", "b", at(1500), at(500))).toBe(true);
      // The holder renews; the renewal counts.
      expect(await store.claimGroupLease("ledger", "a", at(3000), at(900))).toBe(true);
      expect(await store.claimGroupLease("ledger", "b", at(4000), at(2000))).toBe(false);
      // A release by someone else changes nothing.
      await store.releaseGroupLease("ledger", "b");
      expect(await store.claimGroupLease("ledger", "b", at(4000), at(2100))).toBe(false);
      // Expired (a crashed holder stops renewing): taken over, and the old holder cannot renew.
      expect(await store.claimGroupLease("ledger", "b", at(6000), at(3000))).toBe(true);
      expect(await store.claimGroupLease("ledger", "a", at(7000), at(3100))).toBe(false);
      // Released by its holder: free at once.
      await store.releaseGroupLease("ledger", "b");
      expect(await store.claimGroupLease("ledger", "a", at(7000), at(3200))).toBe(true);
      await expectWritError(store.claimGroupLease("", "a", at(1), T0), "invalid_argument");
      await expectWritError(store.claimGroupLease("ledger", "", at(1), T0), "invalid_argument");
    });

    it("two stores claiming one group at once: exactly one gets it, each time it is free", async () => {
      const first = await h.open();
      const second = await h.openSame();
      for (const [round, group] of ["g1", "g2", "g3"].entries()) {
        const claims = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 === 0 ? first : second).claimGroupLease(group, `holder-${i}`, at(1000), at(round)),
          ),
        );
        expect(claims.filter(Boolean)).toHaveLength(1);
        const winner = `holder-${claims.indexOf(true)}`;
        await second.releaseGroupLease(group, winner);
        expect(await first.claimGroupLease(group, "after", at(1000), at(round))).toBe(true);
      }
    });
  });
}
