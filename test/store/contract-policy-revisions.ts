/**
 * The `Store` contract, continued: archived policy revisions. Archiving is idempotent (the same id
 * twice is one row, the first kept), the content comes back byte for byte, listings are newest
 * first and paged, and another instance on the same database sees what one archived.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { expectWritError, type StoreHarness } from "./contract.ts";

const T0 = new Date("2030-01-01T00:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);
const bytes = (text: string) => new TextEncoder().encode(text);

export function policyRevisionContract(h: StoreHarness): void {
  describe("policy revisions", () => {
    it("archives once per id, keeps the content byte for byte, lists newest first in pages", async () => {
      const store = await h.open();
      expect(await store.getPolicyRevision("r1")).toBeUndefined();
      expect(await store.listPolicyRevisions(10)).toEqual({ revisions: [] });
      const directory = bytes(JSON.stringify({ files: [{ path: "a.rego", text: "package a" }] }));
      const bundle = new Uint8Array([0x1f, 0x8b, 0, 255, 1, 2, 3]);
      expect(
        await store.archivePolicyRevision(
          { id: "r1", kind: "directory", origin: "policies", content: directory },
          T0,
        ),
      ).toBe(true);
      // The same revision loaded again: nothing changes, the first load is kept.
      expect(
        await store.archivePolicyRevision(
          { id: "r1", kind: "bundle", origin: "other", content: bundle },
          at(5),
        ),
      ).toBe(false);
      expect(
        await store.archivePolicyRevision(
          { id: "r2", kind: "bundle", origin: "b.tar.gz", content: bundle },
          at(10),
        ),
      ).toBe(true);
      await store.archivePolicyRevision(
        { id: "r3", kind: "directory", origin: "p", content: directory },
        at(20),
      );

      const r1 = await store.getPolicyRevision("r1");
      expect(r1).toEqual({
        id: "r1",
        kind: "directory",
        origin: "policies",
        loaded_at: T0.toISOString(),
        size: directory.byteLength,
        digest: createHash("sha256").update(directory).digest("hex"),
        content: directory,
      });
      expect(r1?.content).toBeInstanceOf(Uint8Array);
      expect((await store.getPolicyRevision("r2"))?.content).toEqual(bundle);

      const first = await store.listPolicyRevisions(2);
      expect(first.revisions.map((r) => r.id)).toEqual(["r3", "r2"]);
      expect(first.revisions[1]).toEqual({
        id: "r2",
        kind: "bundle",
        origin: "b.tar.gz",
        loaded_at: at(10).toISOString(),
        size: bundle.byteLength,
        digest: createHash("sha256").update(bundle).digest("hex"),
      });
      expect(first.next_cursor).toBeTypeOf("string");
      const second = await store.listPolicyRevisions(2, first.next_cursor);
      expect(second).toEqual({ revisions: [expect.objectContaining({ id: "r1" })] });
      await expectWritError(store.listPolicyRevisions(2, "nope"), "invalid_argument");
    });

    it("refuses an invalid revision, and another instance sees what one archived", async () => {
      const first = await h.open();
      await expectWritError(
        first.archivePolicyRevision({ id: "", kind: "directory", origin: "p", content: bytes("x") }),
        "invalid_argument",
      );
      const second = await h.openSame();
      const archived = await Promise.all([
        first.archivePolicyRevision({ id: "same", kind: "bundle", origin: "a", content: bytes("a") }),
        second.archivePolicyRevision({ id: "same", kind: "bundle", origin: "b", content: bytes("b") }),
      ]);
      expect(archived.filter(Boolean)).toHaveLength(1);
      const seen = await second.getPolicyRevision("same");
      expect(seen?.origin === "a" ? "a" : "b").toBe(new TextDecoder().decode(seen?.content));
      expect((await first.listPolicyRevisions(10)).revisions).toHaveLength(1);
    });
  });
}
