/**
 * The `Store` contract, continued: console sessions (issue 15). Only the SHA-256 of a session id
 * is stored; a session is active until it is revoked, expires or (with an idle timeout) goes
 * unused; another store on the same database sees the same session and its revocation; expired
 * sessions are pruned.
 */
import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { NewConsoleSession } from "../../src/store/index.ts";
import { expectWritError, type StoreHarness } from "./contract.ts";

const T0 = new Date("2030-01-01T00:00:00.000Z");
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

function newSession(overrides: Partial<NewConsoleSession> = {}): NewConsoleSession {
  return {
    id_hash: createHash("sha256").update(randomBytes(32)).digest("hex"),
    subject: "rita",
    tenant: "acme",
    issuer: "https://idp.test",
    roles: ["reviewer", "maintainer"],
    scopes: [],
    created_at: T0,
    expires_at: at(60),
    ...overrides,
  };
}

export function consoleSessionContract(h: StoreHarness): void {
  describe("console sessions", () => {
    it("stores a session, marks it seen on use, and ends it at its expiry", async () => {
      const store = await h.open();
      const s = newSession();
      await store.createConsoleSession(s);
      const used = await store.useConsoleSession(s.id_hash, null, at(5));
      expect(used).toEqual({
        state: "active",
        session: { ...s, last_seen_at: at(5), revoked_at: null },
      });
      expect(await store.useConsoleSession(s.id_hash, null, at(60))).toEqual({ state: "expired" });
      expect(await store.useConsoleSession("0".repeat(64), null, at(5))).toEqual({ state: "unknown" });
    });

    it("ends a session left idle longer than the idle timeout; each use restarts the clock", async () => {
      const store = await h.open();
      const s = newSession();
      await store.createConsoleSession(s);
      const tenMinutes = 10 * 60_000;
      expect((await store.useConsoleSession(s.id_hash, tenMinutes, at(9))).state).toBe("active");
      expect((await store.useConsoleSession(s.id_hash, tenMinutes, at(18))).state).toBe("active");
      expect(await store.useConsoleSession(s.id_hash, tenMinutes, at(29))).toEqual({ state: "idle" });
    });

    it("revokes once, for every store on the database", async () => {
      const store = await h.open();
      const other = await h.openSame();
      const s = newSession();
      await store.createConsoleSession(s);
      expect((await other.useConsoleSession(s.id_hash, null, at(1))).state).toBe("active");
      const revoked = await other.revokeConsoleSession(s.id_hash, at(2));
      expect(revoked).toMatchObject({ subject: "rita", tenant: "acme", revoked_at: at(2) });
      expect(await store.revokeConsoleSession(s.id_hash, at(3))).toBeUndefined();
      expect(await store.useConsoleSession(s.id_hash, null, at(3))).toEqual({ state: "revoked" });
      expect(await other.useConsoleSession(s.id_hash, null, at(3))).toEqual({ state: "revoked" });
    });

    it("prunes expired sessions, revoked or not, and keeps the live ones", async () => {
      const store = await h.open();
      const short = newSession({ expires_at: at(10) });
      const revoked = newSession({ expires_at: at(10) });
      const long = newSession({ expires_at: at(120) });
      for (const s of [short, revoked, long]) await store.createConsoleSession(s);
      await store.revokeConsoleSession(revoked.id_hash, at(1));
      expect(await store.pruneConsoleSessions(at(11))).toBe(2);
      expect(await store.pruneConsoleSessions(at(11))).toBe(0);
      expect(await store.useConsoleSession(short.id_hash, null, at(11))).toEqual({ state: "unknown" });
      expect((await store.useConsoleSession(long.id_hash, null, at(11))).state).toBe("active");
    });

    it("refuses a session that is not a SHA-256 hash or that ends before it starts", async () => {
      const store = await h.open();
      await expectWritError(
        store.createConsoleSession(newSession({ id_hash: "raw-id" })),
        "invalid_argument",
      );
      await expectWritError(store.createConsoleSession(newSession({ expires_at: T0 })), "invalid_argument");
      const s = newSession();
      await store.createConsoleSession(s);
      await expect(store.createConsoleSession(s)).rejects.toThrow();
    });
  });
}
