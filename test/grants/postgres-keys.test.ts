/**
 * Grant signing keys kept in PostgreSQL: every instance on the database signs with the current
 * key, publishes all current public keys and accepts grants signed by any of them, and a rotation
 * on one instance reaches the others.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryReplayCache, verifyGrant } from "../../src/executor/index.ts";
import { GrantSigner } from "../../src/grants/index.ts";
import { PostgresStore } from "../../src/store/index.ts";
import { postgresUnavailable, startTestPostgres, type TestPostgres } from "../support/postgres.ts";
import { grantRequest } from "./fixtures.ts";

const args = { path: "README.md" };
const grant = grantRequest(args, { res: { type: "repo", id: "acme/site", rev: "r7" } });

function verify(token: string, signer: GrantSigner) {
  return verifyGrant(token, {
    issuer: "writ",
    audience: "repo-service",
    keys: signer.jwks(),
    args,
    replay: new MemoryReplayCache(),
  });
}

describe.skipIf(postgresUnavailable !== undefined)("grant keys in PostgreSQL", () => {
  let server: TestPostgres;
  const stores: PostgresStore[] = [];
  beforeAll(async () => {
    server = await startTestPostgres();
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await server?.stop();
  });

  /** `count` instances on one fresh database, created at the same moment. */
  async function instances(count: number, config = {}): Promise<GrantSigner[]> {
    const url = await server.createDatabase("writ_keys");
    const opened = await Promise.all(Array.from({ length: count }, () => PostgresStore.open(url)));
    stores.push(...opened);
    return Promise.all(
      opened.map((store) =>
        GrantSigner.create({ issuer: "writ", ...config }, { storage: store.grantKeySet() }),
      ),
    );
  }

  it("gives instances started together one key set, and each accepts the others' grants", async () => {
    const [a, b, c] = await instances(3);
    if (!a || !b || !c) throw new Error("unreachable");
    expect(new Set([a.currentKid, b.currentKid, c.currentKid]).size).toBe(1);
    expect(b.jwks()).toEqual(a.jwks());
    const issued = await a.issue(grant);
    expect((await verify(issued.token, c)).jti).toBe(issued.claims.jti);
  });

  it("makes a rotation on one instance visible to the others", async () => {
    const [a, b] = await instances(2, { reload_interval_s: 0.05, retired_key_grace_s: 60 });
    if (!a || !b) throw new Error("unreachable");
    const before = await b.issue(grant);
    const rotated = await a.rotate();
    // Before b notices, it already publishes a's new current key (it was the pre-published next).
    expect(b.jwks().keys.map((k) => k.kid)).toContain(rotated);
    const after = await a.issue(grant);
    expect((await verify(after.token, b)).jti).toBe(after.claims.jti);
    await new Promise((resolve) => setTimeout(resolve, 60));
    await b.refresh();
    expect(b.currentKid).toBe(rotated);
    // b's earlier grant, signed with the now retired key, still verifies on a.
    expect((await verify(before.token, a)).jti).toBe(before.claims.jti);
  });

  it("serializes rotations racing on two instances: neither loses a key", async () => {
    const [a, b] = await instances(2);
    if (!a || !b) throw new Error("unreachable");
    const kids = await Promise.all([a.rotate(), b.rotate()]);
    expect(kids[0]).not.toBe(kids[1]);
    await a.reload();
    const published = a.jwks().keys.map((k) => k.kid);
    expect(published).toEqual(expect.arrayContaining(kids));
    // The later rotation is current everywhere; the earlier one's key stays published (retired).
    await b.reload();
    expect(kids).toContain(a.currentKid);
    expect(b.currentKid).toBe(a.currentKid);
  });

  it("looks again at once when a grant names a key rotated in by another instance", async () => {
    // A long reload interval: without reloadForKid, b would not see two quick rotations on a.
    const [a, b] = await instances(2, { reload_interval_s: 3600, retired_key_grace_s: 3600 });
    if (!a || !b) throw new Error("unreachable");
    await a.rotate();
    const second = await a.rotate();
    const issued = await a.issue(grant);
    expect(b.jwks().keys.map((k) => k.kid)).not.toContain(second);
    await expect(verify(issued.token, b)).rejects.toMatchObject({ code: "bad_signature" });
    expect(await b.reloadForKid(second)).toBe(true);
    expect((await verify(issued.token, b)).jti).toBe(issued.claims.jti);
    // Made-up key ids reload at most once a second.
    expect(await b.reloadForKid("made-up-1")).toBe(false);
    expect(await b.reloadForKid("made-up-2")).toBe(false);
  });
});
