import { chmod, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WritError } from "../../src/core/errors.ts";
import { DEV_ISSUER, DevIssuer, IdentityVerifier } from "../../src/identity/index.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "writ-dev-issuer-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("DevIssuer", () => {
  it("mints tokens that a verifier trusting its issuer config accepts", async () => {
    const dev = await DevIssuer.create();
    const verifier = new IdentityVerifier({ issuers: [dev.issuerConfig()] });
    const token = await dev.mint({
      sub: "alice",
      tenant: "acme",
      roles: ["dev"],
      scopes: ["repo:read", "repo:write"],
    });
    await expect(verifier.verify(`Bearer ${token}`)).resolves.toMatchObject({
      id: "alice",
      tenant: "acme",
      roles: ["dev"],
      scopes: ["repo:read", "repo:write"],
      issuer: DEV_ISSUER,
    });
  });

  it("publishes only the public key", async () => {
    const dev = await DevIssuer.create();
    const jwks = dev.jwks();
    expect(jwks.keys).toEqual([
      { kty: "OKP", crv: "Ed25519", x: expect.any(String), kid: dev.kid, alg: "EdDSA", use: "sig" },
    ]);
    expect(JSON.stringify(jwks)).not.toContain('"d"');
  });

  it("creates its key file with mode 0600 and loads the same key next time", async () => {
    const file = path.join(dir, "nested", "dev-key.json");
    const first = await DevIssuer.create({ keyFile: file });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    const second = await DevIssuer.create({ keyFile: file });
    expect(second.kid).toBe(first.kid);
    const verifier = new IdentityVerifier({ issuers: [second.issuerConfig()] });
    await expect(verifier.verify(`Bearer ${await first.mint({ sub: "bob" })}`)).resolves.toMatchObject({
      id: "bob",
    });
  });

  it("refuses a key file other users can read, and a file that is not a key", async () => {
    const file = path.join(dir, "dev-key.json");
    await DevIssuer.create({ keyFile: file });
    await chmod(file, 0o644);
    await expect(DevIssuer.create({ keyFile: file })).rejects.toThrow(/readable by other users .*/);

    const junk = path.join(dir, "junk.json");
    await writeFile(junk, JSON.stringify({ kty: "oct", k: "abc" }), { mode: 0o600 });
    const error = await DevIssuer.create({ keyFile: junk }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WritError);
    expect(error instanceof WritError && error.suggestedFix).toMatch(/delete .*junk.json/);
    expect(await readFile(junk, "utf8")).toContain("oct");
  });

  it("honours a custom issuer and audience, and bounds the lifetime", async () => {
    const dev = await DevIssuer.create({ issuer: "writ-dev-2", audience: "gateway" });
    const verifier = new IdentityVerifier({ issuers: [dev.issuerConfig()] });
    await expect(
      verifier.verify(`Bearer ${await dev.mint({ sub: "c", ttlSeconds: 60 })}`),
    ).resolves.toMatchObject({
      issuer: "writ-dev-2",
      tenant: "default",
    });
    await expect(dev.mint({ sub: "c", ttlSeconds: 90_000 })).rejects.toThrow(/between 1 and 86400/);
  });
});
