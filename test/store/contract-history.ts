/**
 * The `Store` contract, continued: history facts' buckets (issue 33). What a batch of appended
 * entries counts is summed per bucket, however many buckets one append writes, and a store reads
 * what another store on the same database appended after it read (on SQLite each store keeps
 * the buckets it read in memory).
 */
import { describe, expect, it } from "vitest";
import type { HistoryCount, Store } from "../../src/store/types.ts";
import type { StoreHarness } from "./contract.ts";
import { newEntry } from "./fixtures.ts";

const AT = "2030-01-01T00:00:30.000Z";
const SINCE = Date.parse("2030-01-01T00:00:00.000Z") - 3_600_000;

function counted(key: string, amount: number): { timestamp: string; history: HistoryCount[] } {
  return { timestamp: AT, history: [{ fact: "reads:1", key, bucket_s: 60, window_s: 3600, amount }] };
}

async function read(store: Store): Promise<[string, number, number][]> {
  const buckets = await store.historyBuckets(
    ["k0", "k19", "never"].map((key) => ({ fact: "reads:1", key, since: SINCE })),
  );
  return buckets.map((b): [string, number, number] => [b.key, b.count, b.total]).sort();
}

export function historyContract(h: StoreHarness): void {
  describe("history buckets", () => {
    it("sums a batch's counts per bucket, many buckets an append, and reads another store's appends", async () => {
      const store = await h.open();
      // Twenty keys: more buckets than one statement writes; k0 counted twice in the batch.
      const batch = Array.from({ length: 20 }, (_, i) => newEntry(counted(`k${i}`, i)));
      await store.appendDecisions([...batch, newEntry(counted("k0", 5))]);
      expect(await read(store)).toEqual([
        ["k0", 2, 5],
        ["k19", 1, 19],
      ]);

      const other = await h.openSame();
      expect(await read(other)).toEqual([
        ["k0", 2, 5],
        ["k19", 1, 19],
      ]);
      await other.appendEachDecision([newEntry(counted("k0", 1))]);
      // The first store read k0 before: it must not answer from what it kept.
      expect(await read(store)).toEqual([
        ["k0", 3, 6],
        ["k19", 1, 19],
      ]);
      await store.appendDecisions([newEntry(counted("k19", 1))]);
      expect(await read(other)).toEqual([
        ["k0", 3, 6],
        ["k19", 2, 20],
      ]);
      expect(await read(store)).toEqual([
        ["k0", 3, 6],
        ["k19", 2, 20],
      ]);
    });
  });
}
