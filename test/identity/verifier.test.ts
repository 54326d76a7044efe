import { exportSPKI, importJWK, jwtVerify, SignJWT } from "jose";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { WritError } from "../../src/core/errors.ts";
import { IdentityVerifier, type IssuerConfigInput, identityConfigSchema } from "../../src/identity/index.ts";
import { b64, jwksOf, makeKey, now, sign, startJwksServer, type TestKey } from "./helpers.ts";

// Count real signature verifications: the cache must avoid them.
vi.mock("jose", async (importOriginal) => {
  const actual = await importOriginal<typeof import("jose")>();
  return { ...actual, jwtVerify: vi.fn(actual.jwtVerify) };
});
const verifications = () => vi.mocked(jwtVerify).mock.calls.length;

const ISSUER = "https://idp.test";

function localIssuer(keys: TestKey[], overrides: Partial<IssuerConfigInput> = {}): IssuerConfigInput {
  return { issuer: ISSUER, audience: "writ", jwks: jwksOf(...keys), ...overrides };
}

/** The WritError a rejected verification throws. */
async function rejection(verifier: IdentityVerifier, header: string | undefined): Promise<WritError> {
  try {
    await verifier.verify(header);
  } catch (error) {
    if (error instanceof WritError) return error;
    throw error;
  }
  throw new Error("the token was accepted");
}

let ed: TestKey;
let es: TestKey;
let rs: TestKey;
let other: TestKey;

beforeAll(async () => {
  [ed, es, rs, other] = await Promise.all([
    makeKey("EdDSA"),
    makeKey("ES256"),
    makeKey("RS256"),
    makeKey("EdDSA"),
  ]);
});

describe("IdentityVerifier with inline keys", () => {
  it("maps verified claims to a subject", async () => {
    const verifier = new IdentityVerifier({ issuers: [localIssuer([ed, es, rs])] });
    for (const key of [ed, es, rs]) {
      const token = await sign(key, { tnt: "acme", roles: ["dev", "admin"], scope: "repo:read  repo:write" });
      const subject = await verifier.verify(`Bearer ${token}`);
      expect(subject).toMatchObject({
        id: "alice",
        tenant: "acme",
        roles: ["dev", "admin"],
        scopes: ["repo:read", "repo:write"],
        issuer: ISSUER,
      });
      expect(subject.claims.tnt).toBe("acme");
      expect(Object.isFrozen(subject) && Object.isFrozen(subject.roles)).toBe(true);
    }
  });

  it("defaults the tenant, accepts scopes as an array and honours custom claim names", async () => {
    const plain = new IdentityVerifier({ issuers: [localIssuer([ed])] });
    const subject = await plain.verify(`Bearer ${await sign(ed, { scope: ["a", "b"] })}`);
    expect(subject).toMatchObject({ tenant: "default", roles: [], scopes: ["a", "b"] });

    const custom = new IdentityVerifier({
      issuers: [
        localIssuer([ed], {
          claims: { subject: "email", tenant: "org", roles: "realm_access.roles", scopes: "scp" },
        }),
      ],
    });
    const mapped = await custom.verify(
      `Bearer ${await sign(ed, { email: "a@x.test", org: "o1", realm_access: { roles: ["r1"] }, scp: ["s1"] })}`,
    );
    expect(mapped).toMatchObject({ id: "a@x.test", tenant: "o1", roles: ["r1"], scopes: ["s1"] });
  });

  it("rejects a token without the subject claim, or with a malformed roles claim", async () => {
    const verifier = new IdentityVerifier({ issuers: [localIssuer([ed])] });
    const noSub = await rejection(verifier, `Bearer ${await sign(ed, { sub: undefined })}`);
    expect(noSub.category).toBe("unauthenticated");
    expect(noSub.message).toMatch(/no "sub" claim/);
    const badRoles = await rejection(verifier, `Bearer ${await sign(ed, { roles: [1, 2] })}`);
    expect(badRoles.message).toMatch(/"roles" claim/);
  });

  const cases: Array<[string, () => Promise<string | undefined>, RegExp]> = [
    ["a missing header", async () => undefined, /no Authorization header/],
    [
      "another scheme",
      async () => `Basic ${Buffer.from("a:b").toString("base64")}`,
      /not a Bearer token \(scheme Basic\)/,
    ],
    ["a malformed JWT", async () => "Bearer not-a-jwt", /not a well-formed signed JWT/],
    ["an expired token", async () => `Bearer ${await sign(ed, { exp: now() - 120 })}`, /expired at/],
    ["a token not valid yet", async () => `Bearer ${await sign(ed, { nbf: now() + 600 })}`, /not valid yet/],
    [
      "a token for another audience",
      async () => `Bearer ${await sign(ed, { aud: "other" })}`,
      /audience does not include "writ"/,
    ],
    [
      "a token from an unknown issuer",
      async () => `Bearer ${await sign(ed, { iss: "https://evil.test" })}`,
      /issuer "https:\/\/evil.test" is not configured/,
    ],
    ["a token without exp", async () => `Bearer ${await sign(ed, { exp: undefined })}`, /no exp claim/],
    [
      "a token signed by an unknown key",
      async () => `Bearer ${await sign(other)}`,
      /no key in the configured jwks matches/,
    ],
    [
      "a token signed by another key under a known kid",
      async () => `Bearer ${await sign(other, {}, { kid: ed.kid })}`,
      /signature does not verify/,
    ],
    [
      "an unsigned token (alg: none)",
      async () =>
        `Bearer ${b64({ alg: "none", typ: "JWT" })}.${b64({ iss: ISSUER, aud: "writ", sub: "root", exp: now() + 60 })}.`,
      /unsigned \(alg: none\)/,
    ],
    [
      "an HS256 token forged with the issuer's public key",
      async () => {
        const publicKey = await importJWK(rs.publicJwk, "RS256", { extractable: true });
        if (publicKey instanceof Uint8Array) throw new Error("expected an RSA public key");
        const secret = new TextEncoder().encode(await exportSPKI(publicKey));
        const forged = await new SignJWT({ iss: ISSUER, aud: "writ", sub: "root", exp: now() + 60 })
          .setProtectedHeader({ alg: "HS256", kid: rs.kid })
          .sign(secret);
        return `Bearer ${forged}`;
      },
      /algorithm "HS256" is not allowed/,
    ],
    [
      "a token whose payload was tampered with",
      async () => {
        const [header, , signature] = (await sign(ed)).split(".");
        return `Bearer ${header}.${b64({ iss: ISSUER, aud: "writ", sub: "root", exp: now() + 3600, roles: ["admin"] })}.${signature}`;
      },
      /signature does not verify/,
    ],
    ["an encrypted token", async () => "Bearer a.b.c.d.e", /encrypted JWT/],
  ];

  it.each(cases)("rejects %s, saying why, without echoing the token", async (_name, header, message) => {
    const verifier = new IdentityVerifier({ issuers: [localIssuer([ed, rs])] });
    const value = await header();
    const error = await rejection(verifier, value);
    expect(error.category).toBe("unauthenticated");
    expect(error.httpStatus).toBe(401);
    expect(error.message).toMatch(message);
    expect(error.suggestedFix).not.toBe("");
    const token = value?.split(" ")[1];
    if (token !== undefined && token.length > 8) {
      expect(JSON.stringify(error.toJSON())).not.toContain(token);
      for (const part of token.split(".").filter((segment) => segment.length > 8)) {
        expect(JSON.stringify(error.toJSON())).not.toContain(part);
      }
    }
  });

  it("enforces the algorithm allow-list per issuer", async () => {
    const verifier = new IdentityVerifier({ issuers: [localIssuer([ed, rs], { algorithms: ["EdDSA"] })] });
    await expect(verifier.verify(`Bearer ${await sign(ed)}`)).resolves.toMatchObject({ id: "alice" });
    const error = await rejection(verifier, `Bearer ${await sign(rs)}`);
    expect(error.message).toMatch(/algorithm "RS256" is not allowed .* \(allowed: EdDSA\)/);
  });

  it("says so when the token marks a header extension it needs as critical", async () => {
    const verifier = new IdentityVerifier({ issuers: [localIssuer([ed])] });
    const token = await new SignJWT({ iss: "https://idp.test", aud: "writ", sub: "alice", exp: now() + 60 })
      .setProtectedHeader({
        alg: ed.alg,
        kid: ed.kid,
        crit: ["urn:example:binding"],
        "urn:example:binding": 1,
      })
      .sign(ed.privateKey, { crit: { "urn:example:binding": true } });
    const error = await rejection(verifier, `Bearer ${token}`);
    expect(error.category).toBe("unauthenticated");
    expect(error.message).toContain('"urn:example:binding" as critical ("crit")');
    expect(error.message).not.toMatch(/algorithm/);
    expect(error.suggestedFix).toContain("without critical header extensions");
  });

  it("accepts an expired token within the clock tolerance", async () => {
    const verifier = new IdentityVerifier({ issuers: [localIssuer([ed], { clock_tolerance_s: 30 })] });
    await expect(verifier.verify(`Bearer ${await sign(ed, { exp: now() - 10 })}`)).resolves.toMatchObject({
      id: "alice",
    });
  });
});

describe("IdentityVerifier with an HMAC issuer", () => {
  const secret = "s".repeat(40);

  it("verifies HS256 only when explicitly configured with secret_env", async () => {
    const verifier = new IdentityVerifier(
      { issuers: [{ issuer: ISSUER, audience: "writ", algorithms: ["HS256"], secret_env: "IDP_SECRET" }] },
      { env: { IDP_SECRET: secret } },
    );
    const token = await new SignJWT({ iss: ISSUER, aud: "writ", sub: "svc", exp: now() + 60 })
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode(secret));
    await expect(verifier.verify(`Bearer ${token}`)).resolves.toMatchObject({ id: "svc" });
    const wrong = await new SignJWT({ iss: ISSUER, aud: "writ", sub: "svc", exp: now() + 60 })
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode("x".repeat(40)));
    expect((await rejection(verifier, `Bearer ${wrong}`)).message).toMatch(/signature does not verify/);
  });

  it("refuses to start without a long enough secret", () => {
    const config = {
      issuers: [{ issuer: ISSUER, audience: "writ", algorithms: ["HS256"], secret_env: "IDP_SECRET" }],
    };
    expect(() => new IdentityVerifier(config, { env: {} })).toThrow(/IDP_SECRET .*\(it is not set\)/);
    expect(() => new IdentityVerifier(config, { env: { IDP_SECRET: "short" } })).toThrow(/at least 32 bytes/);
  });
});

describe("identity configuration", () => {
  function problems(issuer: Record<string, unknown>): string[] {
    try {
      new IdentityVerifier({ issuers: [{ issuer: ISSUER, audience: "writ", ...issuer }] });
    } catch (error) {
      if (error instanceof WritError)
        return error.fieldErrors.map((field) => `${field.path}: ${field.message}`);
      throw error;
    }
    return [];
  }

  it("applies the defaults", () => {
    const config = identityConfigSchema.parse({
      issuers: [{ issuer: ISSUER, audience: "writ", jwks_uri: "https://idp.test/jwks" }],
    });
    expect(config.issuers[0]).toMatchObject({
      algorithms: ["EdDSA", "ES256", "RS256"],
      clock_tolerance_s: 30,
      claims: { subject: "sub", tenant: "tnt", roles: "roles", scopes: "scope" },
    });
    expect(config.token_cache.max_entries).toBe(10_000);
  });

  it("refuses alg none, HS* without a secret, unknown algorithms and mixed key sources", () => {
    const jwks = { keys: [] };
    expect(problems({ jwks, algorithms: ["none"] })).toEqual([
      expect.stringMatching(/algorithms\/0: alg none/),
    ]);
    expect(problems({ jwks, algorithms: ["EdDSA", "HS256"] })).toEqual([
      expect.stringMatching(/algorithms\/1: HS256 is allowed only for an HMAC issuer/),
    ]);
    expect(problems({ jwks, algorithms: ["XS1"] })).toEqual([
      expect.stringMatching(/unknown algorithm "XS1"/),
    ]);
    expect(problems({ secret_env: "S", algorithms: ["HS256", "RS256"] })).toEqual([
      expect.stringMatching(/RS256 needs public keys/),
    ]);
    expect(problems({ jwks, jwks_uri: "https://idp.test/jwks" })).toEqual([
      expect.stringMatching(/exactly one of/),
    ]);
    expect(problems({})).toEqual([expect.stringMatching(/exactly one of/)]);
    expect(problems({ jwks_uri: "http://idp.test/jwks" })).toEqual([expect.stringMatching(/must use https/)]);
    expect(problems({ jwks: { keys: [{ kty: "oct", k: "c2VjcmV0" }] } })).toEqual([
      expect.stringMatching(/symmetric/),
    ]);
  });
});

describe("IdentityVerifier with a remote JWKS", () => {
  const servers: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  async function remote(jwks: unknown, overrides: Partial<IssuerConfigInput> = {}) {
    const server = await startJwksServer(jwks);
    servers.push(server);
    const verifier = new IdentityVerifier({
      issuers: [{ issuer: ISSUER, audience: "writ", jwks_uri: server.url, jwks_cooldown_s: 0, ...overrides }],
    });
    return { server, verifier };
  }

  it("fetches the key set once and verifies tokens with it", async () => {
    const { server, verifier } = await remote(jwksOf(ed, es));
    await expect(verifier.verify(`Bearer ${await sign(ed)}`)).resolves.toMatchObject({ id: "alice" });
    await expect(verifier.verify(`Bearer ${await sign(es, { sub: "bob" })}`)).resolves.toMatchObject({
      id: "bob",
    });
    expect(server.requests).toBe(1);
  });

  it("follows a key rotation and drops cached verifications of the removed key", async () => {
    const oldKey = await makeKey("EdDSA");
    const newKey = await makeKey("EdDSA");
    const { server, verifier } = await remote(jwksOf(oldKey));
    const oldToken = `Bearer ${await sign(oldKey)}`;
    await verifier.verify(oldToken);
    await verifier.verify(oldToken);
    expect(verifier.cacheStats()).toMatchObject({ hits: 1, misses: 1 });

    server.serve(jwksOf(newKey));
    // An unknown kid makes jose refetch the key set: the new key verifies.
    await expect(verifier.verify(`Bearer ${await sign(newKey, { sub: "bob" })}`)).resolves.toMatchObject({
      id: "bob",
    });
    expect(server.requests).toBe(2);

    // The cached verification of the old token is not served: its key is gone.
    const error = await rejection(verifier, oldToken);
    expect(error.message).toMatch(/no key in the JWKS at .* matches the token/);
    expect(verifier.cacheStats()).toMatchObject({ hits: 1, invalidations: 1 });
  });

  it("drops cached verifications when a kid is reused for different key material", async () => {
    const first = await makeKey("EdDSA", "k1");
    const second = await makeKey("EdDSA", "k1");
    const stranger = await makeKey("EdDSA");
    const { server, verifier } = await remote(jwksOf(first));
    const token = `Bearer ${await sign(first)}`;
    await verifier.verify(token);

    server.serve(jwksOf(second, stranger));
    await verifier.verify(`Bearer ${await sign(stranger)}`); // triggers the refetch
    const error = await rejection(verifier, token);
    expect(error.message).toMatch(/signature does not verify/);
    expect(verifier.cacheStats().invalidations).toBe(1);
  });

  it("keeps cached verifications whose key survives a refetch", async () => {
    const kept = await makeKey("EdDSA");
    const added = await makeKey("EdDSA");
    const { server, verifier } = await remote(jwksOf(kept));
    const token = `Bearer ${await sign(kept)}`;
    await verifier.verify(token);
    server.serve(jwksOf(kept, added));
    await verifier.verify(`Bearer ${await sign(added)}`);
    const before = verifications();
    await verifier.verify(token);
    expect(verifications()).toBe(before);
    expect(verifier.cacheStats()).toMatchObject({ hits: 1, invalidations: 0 });
  });

  it("reports an unreachable key set as a retryable authentication failure", async () => {
    const { server, verifier } = await remote(jwksOf(ed));
    server.fail(500);
    const error = await rejection(verifier, `Bearer ${await sign(ed)}`);
    expect(error.category).toBe("unauthenticated");
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/could not be fetched from the JWKS at http:\/\/127\.0\.0\.1/);
  });

  it("re-checks a stale key set before serving a cached verification", async () => {
    const rotatedOut = await makeKey("EdDSA");
    const { server, verifier } = await remote(jwksOf(rotatedOut), { jwks_cache_max_age_s: 0.05 });
    const token = `Bearer ${await sign(rotatedOut)}`;
    await verifier.verify(token);
    server.serve(jwksOf(ed));
    await new Promise((resolve) => setTimeout(resolve, 80));
    // No other token forced a refetch: the cache itself notices the key set is stale.
    await expect(verifier.verify(token)).rejects.toThrow(/no key in the JWKS/);
    expect(verifier.cacheStats().invalidations).toBe(1);
  });
});

describe("verified-token cache", () => {
  it("answers a reused token without verifying its signature again", async () => {
    const verifier = new IdentityVerifier({ issuers: [localIssuer([ed])] });
    const token = `Bearer ${await sign(ed)}`;
    const before = verifications();
    const first = await verifier.verify(token);
    for (let i = 0; i < 5; i += 1) expect(await verifier.verify(token)).toBe(first);
    expect(verifications() - before).toBe(1);
    expect(verifier.cacheStats()).toMatchObject({ hits: 5, misses: 1, size: 1 });
  });

  it("never serves a token past its exp", async () => {
    let clock = Date.now();
    const verifier = new IdentityVerifier(
      { issuers: [localIssuer([ed], { clock_tolerance_s: 0 })] },
      { clock: () => clock },
    );
    const token = `Bearer ${await sign(ed, { exp: Math.floor(clock / 1000) + 10 })}`;
    await verifier.verify(token);
    await verifier.verify(token);
    clock += 11_000;
    expect((await rejection(verifier, token)).message).toMatch(/expired/);
    expect(verifier.cacheStats()).toMatchObject({ hits: 1, misses: 2, expirations: 1 });
  });

  it("does not serve a token before its nbf", async () => {
    let clock = Date.now();
    const verifier = new IdentityVerifier(
      { issuers: [localIssuer([ed], { clock_tolerance_s: 5 })] },
      { clock: () => clock },
    );
    const nbf = Math.floor(clock / 1000) + 3;
    const token = `Bearer ${await sign(ed, { nbf })}`;
    await verifier.verify(token); // within the tolerance: accepted and cached
    clock -= 60_000; // the clock steps back
    expect((await rejection(verifier, token)).message).toMatch(/not valid yet/);
  });

  it("stays within max_entries, evicting the least recently used", async () => {
    const verifier = new IdentityVerifier({ issuers: [localIssuer([ed])], token_cache: { max_entries: 2 } });
    const [a, b, c] = await Promise.all(
      ["a", "b", "c"].map(async (sub) => `Bearer ${await sign(ed, { sub })}`),
    );
    await verifier.verify(a);
    await verifier.verify(b);
    await verifier.verify(a); // a is now the most recent
    await verifier.verify(c); // evicts b
    const before = verifications();
    await verifier.verify(a);
    expect(verifications()).toBe(before);
    await verifier.verify(b);
    expect(verifications()).toBe(before + 1);
    expect(verifier.cacheStats()).toMatchObject({ size: 2, evictions: 2 });
  });

  it("can be turned off", async () => {
    const verifier = new IdentityVerifier({ issuers: [localIssuer([ed])], token_cache: { max_entries: 0 } });
    const token = `Bearer ${await sign(ed)}`;
    const before = verifications();
    await verifier.verify(token);
    await verifier.verify(token);
    expect(verifications() - before).toBe(2);
  });
});
