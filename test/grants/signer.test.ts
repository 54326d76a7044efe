import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodeProtectedHeader } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WritError } from "../../src/core/errors.ts";
import { GRANT_TYPE } from "../../src/core/types.ts";
import { MemoryReplayCache, verifyGrant } from "../../src/executor/index.ts";
import { type GrantRequest, GrantSigner } from "../../src/grants/index.ts";
import { grantRequest } from "./fixtures.ts";

const args = { repo: "acme/site", path: "README.md" };

function request(overrides: Partial<GrantRequest> = {}): GrantRequest {
  return grantRequest(args, { res: { type: "repo", id: "acme/site", rev: "r7" }, ...overrides });
}

/** A test clock in milliseconds. */
function testClock(start = Date.UTC(2030, 0, 1)) {
  const clock = {
    now: start,
    read: () => clock.now,
    advance: (seconds: number) => (clock.now += seconds * 1000),
  };
  return clock;
}

function verify(token: string, keys: { keys: unknown[] }, now: number) {
  return verifyGrant(token, {
    issuer: "writ",
    audience: "repo-service",
    keys,
    args,
    now: new Date(now),
    replay: new MemoryReplayCache({ now: () => now }),
  });
}

describe("GrantSigner", () => {
  it("signs grants with an EdDSA key named by kid, typ writ-grant+jwt", async () => {
    const clock = testClock();
    const signer = await GrantSigner.create({ issuer: "writ" }, { clock: clock.read });
    const { token, claims } = await signer.issue(request());
    expect(decodeProtectedHeader(token)).toEqual({ alg: "EdDSA", kid: signer.currentKid, typ: GRANT_TYPE });
    const iat = Math.floor(clock.now / 1000);
    expect(claims).toMatchObject({
      iss: "writ",
      iat,
      nbf: iat,
      exp: iat + 60,
      sub: "alice",
      res: { rev: "r7" },
    });
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    await expect(verify(token, signer.jwks(), clock.now)).resolves.toEqual(claims);
  });

  it("gives every grant its own jti, and caps the lifetime", async () => {
    const signer = await GrantSigner.create({ issuer: "writ", max_ttl_s: 120 });
    const a = await signer.issue(request({ ttlSeconds: 30 }));
    const b = await signer.issue(request({ ttlSeconds: 3600 }));
    expect(a.claims.jti).not.toBe(b.claims.jti);
    expect(a.claims.exp - a.claims.iat).toBe(30);
    expect(b.claims.exp - b.claims.iat).toBe(120);
    await expect(signer.issue(request({ ttlSeconds: 0 }))).rejects.toThrow(/positive integer/);
  });

  it("refuses to sign invalid claims", async () => {
    const signer = await GrantSigner.create({ issuer: "writ" });
    const error = await signer
      .issue(request({ args: "not-a-digest", max: 0 }))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WritError);
    expect(error instanceof WritError && error.fieldErrors.map((field) => field.path)).toEqual([
      "/args",
      "/max",
    ]);
  });

  it("signs with ES256 when configured", async () => {
    const signer = await GrantSigner.create({ issuer: "writ", algorithm: "ES256" });
    const { token } = await signer.issue(request());
    expect(decodeProtectedHeader(token).alg).toBe("ES256");
    expect(signer.jwks().keys[0]).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
    await expect(verify(token, signer.jwks(), Date.now())).resolves.toMatchObject({ sub: "alice" });
  });

  it("publishes public keys only: the current key and the next one", async () => {
    const signer = await GrantSigner.create({ issuer: "writ" });
    const { keys } = signer.jwks();
    expect(keys).toHaveLength(2);
    expect(keys[0]?.kid).toBe(signer.currentKid);
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
      expect(key).toMatchObject({ alg: "EdDSA", use: "sig" });
    }
  });

  it("rotates to the pre-published key and keeps the old key published until its grants expire", async () => {
    const clock = testClock();
    const signer = await GrantSigner.create({ issuer: "writ" }, { clock: clock.read });
    const published = signer.jwks();
    const oldKid = signer.currentKid;
    const nextKid = published.keys[1]?.kid;
    const before = await signer.issue(request({ ttlSeconds: 60 }));

    const newKid = await signer.rotate();
    expect(newKid).toBe(nextKid);
    expect(signer.currentKid).toBe(newKid);
    // Executors that cached the key set before the rotation already know the new key.
    const after = await signer.issue(request());
    expect(decodeProtectedHeader(after.token).kid).toBe(newKid);
    await expect(verify(after.token, published, clock.now)).resolves.toMatchObject({ jti: after.claims.jti });

    // The grant signed before the rotation still verifies with the current key set.
    expect(signer.jwks().keys.map((key) => key.kid)).toContain(oldKid);
    await expect(verify(before.token, signer.jwks(), clock.now)).resolves.toMatchObject({
      jti: before.claims.jti,
    });

    clock.advance(59);
    expect(signer.jwks().keys.map((key) => key.kid)).toContain(oldKid);
    clock.advance(1);
    const keys = signer.jwks().keys.map((key) => key.kid);
    expect(keys).not.toContain(oldKid);
    expect(keys).toHaveLength(2);
  });

  it("drops a retired key that signed nothing at once (in memory)", async () => {
    const signer = await GrantSigner.create({ issuer: "writ" });
    const oldKid = signer.currentKid;
    await signer.rotate();
    expect(signer.jwks().keys.map((key) => key.kid)).not.toContain(oldKid);
  });

  it("validates its configuration", async () => {
    await expect(GrantSigner.create({ issuer: "writ", default_ttl_s: 600 })).rejects.toThrow(
      /grants configuration/,
    );
    const error = await GrantSigner.create({ issuer: "" }).catch((caught: unknown) => caught);
    expect(error instanceof WritError && error.fieldErrors[0]?.path).toBe("/grants/issuer");
  });
});

describe("GrantSigner with a shared key file", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "writ-grants-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("creates the key file 0600, and another instance loads the same keys", async () => {
    const file = path.join(dir, "keys", "grant-keys.json");
    const a = await GrantSigner.create({ issuer: "writ", key_file: file });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const b = await GrantSigner.create({ issuer: "writ", key_file: file });
    expect(b.jwks()).toEqual(a.jwks());
    const { token } = await a.issue(request());
    await expect(verify(token, b.jwks(), Date.now())).resolves.toMatchObject({ sub: "alice" });
  });

  it("instances created at the same moment agree on one key file", async () => {
    const file = path.join(dir, "grant-keys.json");
    const signers = await Promise.all(
      Array.from({ length: 4 }, () => GrantSigner.create({ issuer: "writ", key_file: file })),
    );
    const kids = new Set(signers.map((signer) => signer.currentKid));
    expect(kids.size).toBe(1);
  });

  it("sees another instance's rotation on reload(), and keeps publishing the retired key", async () => {
    const clock = testClock();
    const file = path.join(dir, "grant-keys.json");
    const config = {
      issuer: "writ",
      key_file: file,
      max_ttl_s: 300,
      retired_key_grace_s: 60,
      reload_interval_s: 10,
    };
    const a = await GrantSigner.create(config, { clock: clock.read });
    const b = await GrantSigner.create(config, { clock: clock.read });
    const oldKid = a.currentKid;
    const fromB = await b.issue(request());

    const newKid = await a.rotate();
    expect(b.currentKid).toBe(oldKid);
    await b.reload();
    expect(b.currentKid).toBe(newKid);
    const { token } = await b.issue(request());
    expect(decodeProtectedHeader(token).kid).toBe(newKid);

    // A never saw B's grant, but keeps the retired key while any instance could have used it.
    await expect(verify(fromB.token, a.jwks(), clock.now)).resolves.toMatchObject({ sub: "alice" });
    clock.advance(300 + 59);
    expect(a.jwks().keys.map((key) => key.kid)).toContain(oldKid);
    clock.advance(1);
    expect(a.jwks().keys.map((key) => key.kid)).not.toContain(oldKid);

    // Once nobody needs it, the next rotation removes its private key from the file.
    await a.rotate();
    expect(await readFile(file, "utf8")).not.toContain(oldKid);
  });

  it("notices a changed key file by itself within reload_interval_s", async () => {
    const clock = testClock();
    const file = path.join(dir, "grant-keys.json");
    const config = { issuer: "writ", key_file: file, reload_interval_s: 10 };
    const a = await GrantSigner.create(config, { clock: clock.read });
    const b = await GrantSigner.create(config, { clock: clock.read });
    const newKid = await a.rotate();
    await b.issue(request()); // within the interval: no check yet
    expect(b.currentKid).not.toBe(newKid);
    clock.advance(10);
    const { token } = await b.issue(request());
    expect(decodeProtectedHeader(token).kid).toBe(newKid);
  });

  it("refuses a key file that is readable by others or not a key file", async () => {
    const file = path.join(dir, "grant-keys.json");
    await writeFile(file, JSON.stringify({ version: 1, keys: [] }), { mode: 0o600 });
    await expect(GrantSigner.create({ issuer: "writ", key_file: file })).rejects.toThrow(
      /not a valid Writ key file/,
    );
    await writeFile(path.join(dir, "open.json"), "{}", { mode: 0o644 });
    await expect(
      GrantSigner.create({ issuer: "writ", key_file: path.join(dir, "open.json") }),
    ).rejects.toThrow(/chmod 600|readable by other users/);
  });
});
