import { createServer } from "node:http";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GRANT_TYPE, type GrantClaims } from "../../src/core/types.ts";
import {
  GrantError,
  type GrantErrorCode,
  MemoryReplayCache,
  type VerifyGrantOptions,
  verifyGrant,
} from "../../src/executor/index.ts";
import { checkIssuedGrant } from "../../src/executor/issued.ts";
import { type GrantRequest, GrantSigner } from "../../src/grants/index.ts";
import { grantRequest } from "../grants/fixtures.ts";

const args = { repo: "acme/site", path: "README.md", dry_run: true, amount: 40 };

function request(overrides: Partial<GrantRequest> = {}): GrantRequest {
  return grantRequest(args, { act: { name: "repo_write", version: "2.1.0" }, ...overrides });
}

let signer: GrantSigner;

function options(overrides: Partial<VerifyGrantOptions> = {}): VerifyGrantOptions {
  return {
    issuer: "writ",
    audience: "repo-service",
    keys: signer.jwks(),
    action: { name: "repo_write", version: "2.1.0" },
    resource: { type: "repo", id: "acme/site" },
    args,
    replay: new MemoryReplayCache(),
    ...overrides,
  };
}

async function refusal(token: string | undefined, opts: VerifyGrantOptions): Promise<GrantError> {
  try {
    await verifyGrant(token, opts);
  } catch (error) {
    if (error instanceof GrantError) return error;
    throw error;
  }
  throw new Error("the grant was accepted");
}

/** A key outside Writ's key set, and one that shares the kid of Writ's current key. */
async function foreignKey(kid?: string) {
  const { privateKey, publicKey } = await generateKeyPair("EdDSA", { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { privateKey, kid: kid ?? (await calculateJwkThumbprint(jwk)), jwk };
}

/** Signs `payload` (defaults: a valid grant's claims) with a foreign key under `header`. */
async function craft(payload: JWTPayload, header: { kid?: string; typ?: string; alg?: string } = {}) {
  const key = await foreignKey(header.kid);
  return new SignJWT(payload)
    .setProtectedHeader({ alg: header.alg ?? "EdDSA", kid: key.kid, typ: header.typ ?? GRANT_TYPE })
    .sign(key.privateKey);
}

const b64 = (json: unknown) => Buffer.from(JSON.stringify(json)).toString("base64url");

beforeAll(async () => {
  signer = await GrantSigner.create({ issuer: "writ" });
});

describe("verifyGrant", () => {
  it("accepts a valid grant and returns its claims", async () => {
    const { token, claims } = await signer.issue(request());
    await expect(verifyGrant(token, options())).resolves.toEqual(claims);
  });

  it("accepts any version when the endpoint does not pin one, and checks no resource when none is given", async () => {
    const { token } = await signer.issue(request());
    await expect(
      verifyGrant(token, options({ action: { name: "repo_write" }, resource: undefined })),
    ).resolves.toMatchObject({
      act: { version: "2.1.0" },
    });
  });

  it("compares arguments by canonical digest, whatever their key order", async () => {
    const { token } = await signer.issue(request());
    const reordered = { amount: 40.0, dry_run: true, path: "README.md", repo: "acme/site" };
    await expect(verifyGrant(token, options({ args: reordered }))).resolves.toMatchObject({ sub: "alice" });
  });

  it("is single use: the second presentation is refused as replayed", async () => {
    const { token } = await signer.issue(request());
    const replay = new MemoryReplayCache();
    await verifyGrant(token, options({ replay }));
    const error = await refusal(token, options({ replay }));
    expect(error.code).toBe("replayed");
    expect(error.message).toMatch(/already used .* ask Writ for a new grant/);
  });

  it("allows up to max uses (and the stricter max_uses condition)", async () => {
    const replay = new MemoryReplayCache();
    const { token } = await signer.issue(request({ max: 3, cnd: [{ type: "max_uses", uses: 2 }] }));
    await verifyGrant(token, options({ replay }));
    await verifyGrant(token, options({ replay }));
    expect((await refusal(token, options({ replay }))).code).toBe("replayed");
  });

  it("uses a process-wide replay cache by default", async () => {
    const { token } = await signer.issue(request());
    await verifyGrant(token, options({ replay: undefined }));
    expect((await refusal(token, options({ replay: undefined }))).code).toBe("replayed");
  });

  it("does not consume a grant that fails another check", async () => {
    const replay = new MemoryReplayCache();
    const { token } = await signer.issue(request());
    expect((await refusal(token, options({ replay, args: { ...args, path: "x" } }))).code).toBe(
      "args_mismatch",
    );
    await expect(verifyGrant(token, options({ replay }))).resolves.toMatchObject({ sub: "alice" });
  });

  const cases: Array<
    [GrantErrorCode, string, () => Promise<[string | undefined, Partial<VerifyGrantOptions>]>]
  > = [
    ["missing_grant", "no grant", async () => [undefined, {}]],
    ["malformed", "garbage", async () => ["garbage", {}]],
    ["malformed", "a header that is not JSON", async () => ["bm90IGpzb24.e30.c2ln", {}]],
    [
      "expired",
      "an expired grant",
      async () => [(await signer.issue(request())).token, { now: new Date(Date.now() + 120_000) }],
    ],
    [
      "not_yet_valid",
      "a grant used before nbf",
      async () => [(await signer.issue(request())).token, { now: new Date(Date.now() - 60_000) }],
    ],
    [
      "wrong_audience",
      "a grant for another executor",
      async () => [(await signer.issue(request({ aud: "billing" }))).token, {}],
    ],
    [
      "wrong_issuer",
      "a grant from another Writ",
      async () => {
        const stranger = await GrantSigner.create({ issuer: "other-writ" });
        return [(await stranger.issue(request())).token, { keys: stranger.jwks() }];
      },
    ],
    [
      "args_mismatch",
      "tampered arguments",
      async () => [(await signer.issue(request())).token, { args: { ...args, path: "/etc/passwd" } }],
    ],
    [
      "args_mismatch",
      "arguments that are not JSON",
      async () => [(await signer.issue(request())).token, { args: undefined }],
    ],
    [
      "action_mismatch",
      "a grant for another action",
      async () => [
        (await signer.issue(request({ act: { name: "repo_delete", version: "2.1.0" } }))).token,
        {},
      ],
    ],
    [
      "action_mismatch",
      "a grant for another version",
      async () => [
        (await signer.issue(request())).token,
        { action: { name: "repo_write", version: "3.0.0" } },
      ],
    ],
    [
      "resource_mismatch",
      "a grant for another resource",
      async () => [(await signer.issue(request())).token, { resource: { type: "repo", id: "acme/other" } }],
    ],
    [
      "bad_signature",
      "a grant signed by another key under Writ's kid",
      async () => {
        const { claims } = await signer.issue(request());
        return [await craft({ ...claims }, { kid: signer.currentKid }), {}];
      },
    ],
    [
      "bad_signature",
      "a grant signed by a key Writ never published",
      async () => [await craft({ ...(await signer.issue(request())).claims }), {}],
    ],
    [
      "bad_signature",
      "a grant whose payload was edited",
      async () => {
        const { token, claims } = await signer.issue(request());
        const [header, , signature] = token.split(".");
        return [`${header}.${b64({ ...claims, max: 1000 })}.${signature}`, {}];
      },
    ],
    [
      "alg_not_allowed",
      "an unsigned grant (alg none)",
      async () => {
        const { claims } = await signer.issue(request());
        return [`${b64({ alg: "none", typ: GRANT_TYPE })}.${b64(claims)}.`, {}];
      },
    ],
    [
      "alg_not_allowed",
      "an HS256 grant forged with a public key",
      async () => {
        const { claims } = await signer.issue(request());
        const secret = new TextEncoder().encode(JSON.stringify(signer.jwks().keys[0]));
        const forged = await new SignJWT({ ...claims })
          .setProtectedHeader({ alg: "HS256", kid: signer.currentKid, typ: GRANT_TYPE })
          .sign(secret);
        return [forged, {}];
      },
    ],
    [
      "wrong_type",
      "an identity token instead of a grant",
      async () => {
        const { claims } = await signer.issue(request());
        return [await craft({ ...claims }, { typ: "JWT" }), {}];
      },
    ],
  ];

  it.each(cases)("refuses with %s: %s", async (code, _name, make) => {
    const [token, overrides] = await make();
    const error = await refusal(token, options(overrides));
    expect(error.code).toBe(code);
    expect(error.problem.length).toBeGreaterThan(10);
    expect(error.suggestedFix.length).toBeGreaterThan(10);
    expect(error.message).toBe(`${error.problem}; ${error.suggestedFix}`);
  });

  describe("with grants crafted by a trusted key", () => {
    let keys: { keys: unknown[] };
    let key: Awaited<ReturnType<typeof foreignKey>>;
    beforeAll(async () => {
      key = await foreignKey("trusted");
      keys = { keys: [{ ...key.jwk, kid: "trusted", alg: "EdDSA", use: "sig" }] };
    });

    async function signed(payload: JWTPayload) {
      return new SignJWT(payload)
        .setProtectedHeader({ alg: "EdDSA", kid: "trusted", typ: GRANT_TYPE })
        .sign(key.privateKey);
    }

    it("refuses a grant with an unknown condition type", async () => {
      const { claims } = await signer.issue(request());
      const token = await signed({ ...claims, cnd: [{ type: "geo_fence", region: "eu" }] });
      const error = await refusal(token, options({ keys }));
      expect(error.code).toBe("unknown_condition");
      expect(error.message).toMatch(/"geo_fence"/);
    });

    it("refuses a grant whose claims do not have the grant shape", async () => {
      const { claims } = await signer.issue(request());
      const token = await signed({ ...claims, res: { type: "repo" } });
      const error = await refusal(token, options({ keys }));
      expect(error.code).toBe("malformed");
      expect(error.message).toMatch(/at \/res\/id/);
      const noJti = await signed({ ...claims, jti: undefined });
      expect((await refusal(noJti, options({ keys }))).code).toBe("malformed");
    });

    it("enforces the conditions it can check from the arguments", async () => {
      const overriding = {
        ...(await signer.issue(request())).claims,
        cnd: [{ type: "args_override", args: { dry_run: false } }],
      };
      expect((await refusal(await signed(overriding), options({ keys }))).message).toMatch(
        /forces argument "dry_run"/,
      );
      const capped = {
        ...(await signer.issue(request())).claims,
        cnd: [{ type: "max_value", path: "/amount", max: 10 }],
      };
      expect((await refusal(await signed(capped), options({ keys }))).message).toMatch(
        /limits \/amount to at most 10/,
      );
      const fine = {
        ...(await signer.issue(request())).claims,
        cnd: [
          { type: "args_override", args: { dry_run: true } },
          { type: "max_value", path: "/amount", max: 40 },
          { type: "redact_result", paths: ["/secret"] },
        ],
      };
      const claims = await verifyGrant(await signed(fine), options({ keys }));
      expect(claims.cnd).toEqual([
        { type: "args_override", args: { dry_run: true } },
        { type: "max_value", path: "/amount", max: 40 },
        { type: "redact_result", paths: ["/secret"], classifications: [] },
      ]);
    });
  });

  it("reports an unusable keys option as unavailable", async () => {
    const { token } = await signer.issue(request());
    expect((await refusal(token, options({ keys: { keys: [{ kty: "oct", k: "c2VjcmV0" }] } }))).code).toBe(
      "unavailable",
    );
    expect((await refusal(token, options({ keys: "http://127.0.0.1:1/jwks.json" }))).code).toBe(
      "unavailable",
    );
  });

  it("imports a key set's keys once, though given as a new object with the same keys for every call", async () => {
    const rotated = await GrantSigner.create({ issuer: "writ" });
    const imports = vi.spyOn(crypto.subtle, "importKey");
    try {
      for (let i = 0; i < 3; i++) {
        const { token } = await rotated.issue(request());
        await expect(verifyGrant(token, options({ keys: rotated.jwks() }))).resolves.toMatchObject({
          act: { name: "repo_write" },
        });
      }
      expect(imports).toHaveBeenCalledTimes(1);
    } finally {
      imports.mockRestore();
    }
  });

  it("reports a failing replay guard as unavailable, without consuming the grant", async () => {
    const { token } = await signer.issue(request());
    const broken = { consume: async () => Promise.reject(new Error("store down")) };
    const error = await refusal(token, options({ replay: broken }));
    expect(error.code).toBe("unavailable");
    expect(error.message).toMatch(/store down/);
  });
});

describe("checkIssuedGrant (a grant this process just issued, its token never out of it)", () => {
  async function issuedRefusal(claims: GrantClaims, opts: VerifyGrantOptions): Promise<GrantErrorCode> {
    try {
      await checkIssuedGrant(claims, opts);
    } catch (error) {
      if (error instanceof GrantError) return error.code;
      throw error;
    }
    throw new Error("the grant was accepted");
  }

  it("accepts the claims it was given and consumes them once, without a key set", async () => {
    const { claims } = await signer.issue(request());
    const replay = new MemoryReplayCache();
    const noKeys = { keys: { keys: [] } };
    await expect(checkIssuedGrant(claims, options({ replay, ...noKeys }))).resolves.toEqual(claims);
    expect(await issuedRefusal(claims, options({ replay, ...noKeys }))).toBe("replayed");
  });

  // Every check of verifyGrant but the signature's, refused with the same code as verifyGrant's.
  const cases: Array<[GrantErrorCode, string, Partial<GrantRequest>, Partial<VerifyGrantOptions>]> = [
    ["expired", "an expired grant", {}, { now: new Date(Date.now() + 120_000) }],
    ["not_yet_valid", "a grant used before nbf", {}, { now: new Date(Date.now() - 60_000) }],
    ["wrong_audience", "a grant for another executor", { aud: "billing" }, {}],
    ["wrong_issuer", "a grant from another issuer", {}, { issuer: "other-writ" }],
    ["args_mismatch", "other arguments", {}, { args: { ...args, path: "/etc/passwd" } }],
    [
      "args_mismatch",
      "a max_value condition exceeded",
      { cnd: [{ type: "max_value", path: "/amount", max: 10 }] },
      {},
    ],
    ["action_mismatch", "a grant for another action", { act: { name: "repo_delete", version: "2.1.0" } }, {}],
    [
      "resource_mismatch",
      "a grant for another resource",
      {},
      { resource: { type: "repo", id: "acme/other" } },
    ],
    [
      "stale_revision",
      "a resource whose revision moved",
      { res: { type: "repo", id: "acme/site", rev: "3" } },
      { resourceRevision: 4 },
    ],
  ];
  it.each(cases)("refuses %s: %s", async (code, _label, overrides, opts) => {
    const { token, claims } = await signer.issue(request(overrides));
    expect(await issuedRefusal(claims, options(opts))).toBe(code);
    expect((await refusal(token, options(opts))).code).toBe(code);
  });
});

describe("verifyGrant with Writ's JWKS URL across a key rotation", () => {
  const clock = { now: Date.now() };
  let rotating: GrantSigner;
  let url: string;
  let fetches = 0;
  const server = createServer((_request, response) => {
    fetches += 1;
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(rotating.jwks()));
  });

  beforeAll(async () => {
    rotating = await GrantSigner.create({ issuer: "writ" }, { clock: () => clock.now });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no TCP address");
    url = `http://127.0.0.1:${address.port}/.well-known/jwks.json`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("verifies grants signed before and after rotate(), and drops the old key once they expired", async () => {
    const before = await rotating.issue(request({ ttlSeconds: 60 }));
    const oldKid = rotating.currentKid;
    await rotating.rotate();
    const after = await rotating.issue(request());

    await expect(verifyGrant(before.token, options({ keys: url }))).resolves.toMatchObject({
      jti: before.claims.jti,
    });
    await expect(verifyGrant(after.token, options({ keys: new URL(url) }))).resolves.toMatchObject({
      jti: after.claims.jti,
    });
    expect(fetches).toBe(1);

    clock.now += 61_000;
    expect(rotating.jwks().keys.map((key) => key.kid)).not.toContain(oldKid);
  });
});
