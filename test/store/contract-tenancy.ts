/**
 * The tenant-scoped reads and writes of the Store contract (issue 15): what an administrative or
 * review surface can reach is bounded by the scope it passes, on SQLite and PostgreSQL alike.
 */
import { describe, expect, it } from "vitest";
import { ALL_TENANTS } from "../../src/store/index.ts";
import type { StoreHarness } from "./contract.ts";
import { expectWritError } from "./contract.ts";
import { newEntry } from "./fixtures.ts";

const acme = { tenant: "acme" };
const beta = { tenant: "beta" };
const workspace = (tenant: string, attributes: Record<string, unknown> = {}) => ({
  type: "workspace",
  id: "ws-1",
  owner: `${tenant}-owner`,
  tenant,
  attributes,
});

export function tenancyContract(h: StoreHarness): void {
  describe("tenant scopes", () => {
    it("reads and writes a resource only within its tenant's scope", async () => {
      const store = await h.open();
      const created = await store.putResourceIn(acme, workspace("acme", { readable: ["src/**"] }));
      expect(created).toMatchObject({
        ok: true,
        resource: { tenant: "acme", revision: 1 },
        previous: undefined,
      });
      expect(await store.getResourceIn(acme, "workspace", "ws-1")).toMatchObject({ owner: "acme-owner" });
      expect(await store.getResourceIn(beta, "workspace", "ws-1")).toBeUndefined();
      expect(await store.getResourceIn(ALL_TENANTS, "workspace", "ws-1")).toMatchObject({ tenant: "acme" });

      // beta can neither take the name over nor change what acme stored.
      expect(await store.putResourceIn(beta, workspace("beta", { readable: [".env"] }))).toEqual({
        ok: false,
        reason: "held_by_another_tenant",
      });
      await expectWritError(store.putResourceIn(beta, workspace("acme")), "forbidden");
      expect(await store.getResource("workspace", "ws-1")).toMatchObject({
        tenant: "acme",
        revision: 1,
        attributes: { readable: ["src/**"] },
      });

      const replaced = await store.putResourceIn(acme, workspace("acme", { readable: ["docs/**"] }));
      expect(replaced).toMatchObject({ ok: true, resource: { revision: 2 }, previous: { revision: 1 } });
      // The platform scope may move a resource to another tenant.
      const moved = await store.putResourceIn(ALL_TENANTS, workspace("beta"));
      expect(moved).toMatchObject({ ok: true, resource: { tenant: "beta", revision: 3 } });
      expect(await store.getResourceIn(acme, "workspace", "ws-1")).toBeUndefined();
    });

    it("lets exactly one of two tenants racing for a new name have it", async () => {
      const store = await h.open();
      const other = await h.openSame();
      const [a, b] = await Promise.all([
        store.putResourceIn(acme, workspace("acme")),
        other.putResourceIn(beta, workspace("beta")),
      ]);
      expect([a.ok, b.ok].filter(Boolean)).toHaveLength(1);
      const holder = a.ok ? "acme" : "beta";
      expect(await store.getResource("workspace", "ws-1")).toMatchObject({ tenant: holder, revision: 1 });
    });

    it("reads and queries decisions only within the scope, with cursors bound to it", async () => {
      const store = await h.open();
      const ours = [];
      for (let i = 0; i < 3; i++) {
        ours.push(await store.appendDecision(newEntry({ tenant: "acme" })));
        await store.appendDecision(newEntry({ tenant: "beta" }));
      }
      const unauthenticated = await store.appendDecision(newEntry({ tenant: null, subject: null }));
      const [first] = ours;
      if (first === undefined) throw new Error("unreachable");

      expect(await store.getDecisionIn(acme, first.decision_id)).toMatchObject({ seq: first.seq });
      expect(await store.getDecisionIn(beta, first.decision_id)).toBeUndefined();
      expect(await store.getDecisionIn(acme, unauthenticated.decision_id)).toBeUndefined();
      expect(await store.getDecisionIn(ALL_TENANTS, unauthenticated.decision_id)).toBeDefined();

      const page1 = await store.queryDecisionsIn(acme, {}, 2);
      expect(page1.entries.map((e) => e.tenant)).toEqual(["acme", "acme"]);
      const cursor = page1.next_cursor;
      if (cursor === undefined) throw new Error("expected a second page");
      const page2 = await store.queryDecisionsIn(acme, {}, 2, cursor);
      expect([...page1.entries, ...page2.entries].map((e) => e.seq)).toEqual(
        ours.map((e) => e.seq).reverse(),
      );
      expect(page2.next_cursor).toBeUndefined();

      // A filter naming another tenant matches nothing; a cursor from another scope is refused.
      expect((await store.queryDecisionsIn(acme, { tenant: "beta" }, 50)).entries).toEqual([]);
      await expectWritError(store.queryDecisionsIn(beta, {}, 2, cursor), "invalid_argument");
      await expectWritError(store.queryDecisionsIn(ALL_TENANTS, {}, 2, cursor), "invalid_argument");
      const plain = (await store.queryDecisions({}, 2)).next_cursor;
      if (plain === undefined) throw new Error("expected a second page");
      await expectWritError(store.queryDecisionsIn(acme, {}, 2, plain), "invalid_argument");

      expect((await store.queryDecisionsIn(ALL_TENANTS, {}, 50)).entries).toHaveLength(7);
      expect((await store.queryDecisionsIn(ALL_TENANTS, { tenant: "beta" }, 50)).entries).toHaveLength(3);
    });
  });
}
