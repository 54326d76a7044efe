/**
 * The `Store` contract, continued: the decision log's head, signed checkpoints (one per seq, the
 * first kept, also when instances race) and the checkpoint key set every instance shares.
 */
import { describe, expect, it } from "vitest";
import { Checkpointer, CheckpointKeys, verifyCheckpoint } from "../../src/decisionlog/index.ts";
import type { StoredCheckpoint } from "../../src/store/index.ts";
import { expectWritError, type StoreHarness } from "./contract.ts";
import { newEntry } from "./fixtures.ts";

function checkpointAt(
  seq: number,
  hash: string,
  overrides: Partial<StoredCheckpoint> = {},
): StoredCheckpoint {
  return { seq, hash, time: "2030-01-01T00:00:00.000Z", kid: "k1", jws: `jws-${seq}`, ...overrides };
}

export function checkpointContract(h: StoreHarness): void {
  describe("checkpoints", () => {
    it("reads the log's head: undefined while empty, then the last entry's seq and hash", async () => {
      const store = await h.open();
      expect(await store.decisionHead()).toBeUndefined();
      const stored = await store.appendDecisions([newEntry(), newEntry()]);
      expect(await store.decisionHead()).toEqual({ seq: 2, hash: stored[1]?.hash });
    });

    it("keeps one checkpoint per seq (the first), the latest and every one in seq order", async () => {
      const store = await h.open();
      expect(await store.latestCheckpoint()).toBeUndefined();
      const a = checkpointAt(3, "a".repeat(64));
      const b = checkpointAt(7, "b".repeat(64), { time: "2030-01-01T00:01:00.000Z" });
      expect(await store.addCheckpoint(b)).toBe(true);
      expect(await store.addCheckpoint(a)).toBe(true);
      expect(await store.addCheckpoint({ ...b, jws: "another" })).toBe(false);
      expect(await store.latestCheckpoint()).toEqual(b);
      expect(await store.readCheckpoints(1, 10)).toEqual([a, b]);
      expect(await store.readCheckpoints(4, 10)).toEqual([b]);
      await expectWritError(store.addCheckpoint(checkpointAt(0, "c".repeat(64))), "invalid_argument");
      await expectWritError(store.addCheckpoint(checkpointAt(9, "not a hash")), "invalid_argument");
    });

    it("two instances checkpointing the same head at once: one checkpoint is kept", async () => {
      const first = await h.open();
      const second = await h.openSame();
      await first.appendDecisions([newEntry(), newEntry(), newEntry()]);
      const [keysA, keysB] = await Promise.all([
        CheckpointKeys.open(first.checkpointKeySet()),
        CheckpointKeys.open(second.checkpointKeySet()),
      ]);
      // Every instance on the store signs with the same key.
      expect(keysA.kid).toBe(keysB.kid);
      const written = await Promise.all([
        new Checkpointer({ store: first, keys: keysA, intervalMs: 0 }).checkpoint(),
        new Checkpointer({ store: second, keys: keysB, intervalMs: 0 }).checkpoint(),
      ]);
      expect(written.filter((c) => c !== undefined)).toHaveLength(1);
      const all = await first.readCheckpoints(1, 10);
      expect(all.map((c) => c.seq)).toEqual([3]);
      const verified = await verifyCheckpoint(all[0]?.jws ?? "", keysA.jwks());
      expect(verified).toMatchObject({
        ok: true,
        payload: { seq: 3, hash: (await first.decisionHead())?.hash },
      });
    });

    it("keeps the checkpoint key set: created once, replaced with a new stamp", async () => {
      const store = await h.open();
      const keys = store.checkpointKeySet();
      expect(keys.description).toContain("checkpoint_key_set");
      expect(await keys.read()).toBeUndefined();
      expect(await keys.stamp()).toBeUndefined();
      await keys.create("first");
      await keys.create("second");
      expect(await keys.read()).toEqual({ text: "first", stamp: "1" });
      const replaced = await keys.replace(async (current) => `${current ?? ""}+`);
      expect(replaced).toEqual({ text: "first+", stamp: "2" });
      expect(await (await h.openSame()).checkpointKeySet().read()).toEqual(replaced);
    });
  });
}
