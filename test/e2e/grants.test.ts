/**
 * Grants end to end: what the gateway hands out is verified by `writ/executor`'s `verifyGrant`
 * against the gateway's published key set (fetched over HTTP), and every way a grant can be
 * misused is refused with its GrantError code. With `execute: true` the gateway runs the call
 * itself, returns the layered result, and consumes the grant in its store.
 */
import { randomUUID } from "node:crypto";
import { CompactSign, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { DEMO_FILES } from "../../src/demo/repository.ts";
import {
  GrantError,
  type GrantErrorCode,
  MemoryReplayCache,
  type VerifyGrantOptions,
  verifyGrant,
} from "../../src/executor/index.ts";
import { b64, makeKey } from "../identity/helpers.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import {
  canonicalCall,
  digestOf,
  expectLogVerifies,
  logEntry,
  type Outcome,
  onlyOutcome,
  README_ARGS,
  resourceSchema,
  WS,
} from "./api.ts";

let gw: TestGateway;
let alice: string;
let allowed: Outcome;
let grantToken: string;

beforeAll(async () => {
  gw = await startTestGateway();
  alice = await gw.token("alice");
  allowed = onlyOutcome(
    await gw.propose(alice, { format: "canonical", payload: canonicalCall("repo.read", README_ARGS) }),
  );
  if (allowed.grant === undefined) throw new Error(`no grant: ${JSON.stringify(allowed)}`);
  grantToken = allowed.grant.token;
});

afterAll(async () => {
  await gw?.close();
});

/** What an executor serving repo.read on ws-demo checks, with its own replay cache. */
function executorOptions(overrides: Partial<VerifyGrantOptions> = {}): VerifyGrantOptions {
  return {
    issuer: "writ",
    audience: "writ",
    keys: gw.jwksUrl,
    action: { name: "repo.read", version: "1" },
    resource: { type: "workspace", id: WS },
    args: README_ARGS,
    replay: new MemoryReplayCache(),
    ...overrides,
  };
}

async function refusalOf(token: string, options: VerifyGrantOptions): Promise<GrantErrorCode> {
  try {
    await verifyGrant(token, options);
  } catch (error) {
    if (error instanceof GrantError) return error.code;
    throw error;
  }
  throw new Error("verifyGrant accepted a grant it should refuse");
}

function segments(token: string): { header: string; payload: string; signature: string } {
  const [header, payload, signature, ...rest] = token.split(".");
  if (header === undefined || payload === undefined || signature === undefined || rest.length > 0) {
    throw new Error("not a compact JWS");
  }
  return { header, payload, signature };
}

const publicJwksSchema = z.object({
  keys: z
    .array(
      z.strictObject({
        kty: z.literal("OKP"),
        crv: z.literal("Ed25519"),
        x: z.string(),
        kid: z.string(),
        alg: z.literal("EdDSA"),
        use: z.literal("sig"),
      }),
    )
    .min(1),
});

describe("verifyGrant against the gateway's JWKS URL", () => {
  it("the key set is public keys only, and names the grant's kid", async () => {
    const answer = await gw.request("GET", "/.well-known/jwks.json");
    expect(answer.status).toBe(200);
    const jwks = publicJwksSchema.parse(answer.json);
    const header = decodeProtectedHeader(grantToken);
    expect(header).toMatchObject({ alg: "EdDSA", typ: "writ-grant+jwt" });
    expect(jwks.keys.map((k) => k.kid)).toContain(header.kid);
  });

  it("a valid grant with the same arguments verifies, and its claims bind the call", async () => {
    const health = await gw.health();
    const resource = resourceSchema.parse(
      (
        await gw.request("GET", `/v1/resources/workspace/${WS}`, {
          token: await gw.token("ops", { roles: ["admin"] }),
        })
      ).json,
    );
    const claims = await verifyGrant(grantToken, executorOptions());
    expect(claims).toMatchObject({
      iss: "writ",
      sub: "alice",
      tnt: "demo",
      aud: "writ",
      jti: allowed.grant?.jti,
      act: { name: "repo.read", version: "1" },
      res: { type: "workspace", id: WS, rev: String(resource.revision) },
      args: digestOf(README_ARGS),
      cnd: [],
      dec: allowed.decision_id,
      pol: health.policy_revision,
      max: 1,
    });
    expect(claims.exp - claims.iat).toBe(60);
    expect(new Date(claims.exp * 1000).toISOString()).toBe(allowed.grant?.expires_at);

    // The same arguments in another key order are the same arguments (RFC 8785 digest).
    await expect(
      verifyGrant(grantToken, executorOptions({ args: { path: "README.md", workspace: WS } })),
    ).resolves.toMatchObject({ dec: allowed.decision_id });

    // And the decision it names is in the log with this grant.
    expect((await logEntry(gw, claims.dec)).grant_jti).toBe(claims.jti);
  });

  it("an expired grant is expired", async () => {
    const later = new Date(Date.now() + 10 * 60 * 1000);
    expect(await refusalOf(grantToken, executorOptions({ now: later }))).toBe("expired");
  });

  it("a grant for another executor is wrong_audience", async () => {
    expect(await refusalOf(grantToken, executorOptions({ audience: "https://payments.internal" }))).toBe(
      "wrong_audience",
    );
  });

  it("tampered arguments are args_mismatch", async () => {
    expect(
      await refusalOf(grantToken, executorOptions({ args: { workspace: WS, path: "src/sum.ts" } })),
    ).toBe("args_mismatch");
    expect(await refusalOf(grantToken, executorOptions({ args: { ...README_ARGS, path: ".env" } }))).toBe(
      "args_mismatch",
    );
  });

  it("another action or resource is refused", async () => {
    expect(
      await refusalOf(grantToken, executorOptions({ action: { name: "repo.propose_edit", version: "1" } })),
    ).toBe("action_mismatch");
    expect(
      await refusalOf(grantToken, executorOptions({ resource: { type: "workspace", id: "ws-other" } })),
    ).toBe("resource_mismatch");
  });

  it("a replayed grant is replayed (same replay cache twice)", async () => {
    const replay = new MemoryReplayCache();
    await expect(verifyGrant(grantToken, executorOptions({ replay }))).resolves.toMatchObject({
      jti: allowed.grant?.jti,
    });
    expect(await refusalOf(grantToken, executorOptions({ replay }))).toBe("replayed");
  });

  it("the payload re-signed with another Ed25519 key under the same kid is bad_signature", async () => {
    const { header, payload } = segments(grantToken);
    const forger = await makeKey("EdDSA");
    const { alg, kid, typ } = decodeProtectedHeader(grantToken);
    expect(alg).toBe("EdDSA");
    const forged = await new CompactSign(Buffer.from(payload, "base64url"))
      .setProtectedHeader({ alg: "EdDSA", kid, typ })
      .sign(forger.privateKey);
    expect(segments(forged).header).toBe(header);
    expect(segments(forged).payload).toBe(payload);
    expect(await refusalOf(forged, executorOptions())).toBe("bad_signature");
  });

  it("claims edited under the original signature are bad_signature", async () => {
    const { header, payload, signature } = segments(grantToken);
    const claims: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    const edited = { ...z.record(z.string(), z.unknown()).parse(claims), sub: "bob" };
    expect(await refusalOf(`${header}.${b64(edited)}.${signature}`, executorOptions())).toBe("bad_signature");
  });

  it("the real payload with alg none and no signature is alg_not_allowed", async () => {
    const { payload } = segments(grantToken);
    const unsigned = `${b64({ ...decodeProtectedHeader(grantToken), alg: "none" })}.${payload}.`;
    expect(await refusalOf(unsigned, executorOptions())).toBe("alg_not_allowed");
  });

  it("a refused verification does not consume the grant", async () => {
    const replay = new MemoryReplayCache();
    expect(await refusalOf(grantToken, executorOptions({ replay, args: {} }))).toBe("args_mismatch");
    await expect(verifyGrant(grantToken, executorOptions({ replay }))).resolves.toBeDefined();
  });
});

describe("execute: true", () => {
  it("runs the read and returns the layered result", async () => {
    const requestId = `exec-${randomUUID()}`;
    const outcome = onlyOutcome(
      await gw.propose(
        alice,
        { format: "canonical", payload: canonicalCall("repo.read", README_ARGS), execute: true },
        requestId,
      ),
    );
    expect(outcome.decision).toBe("allow");
    expect(outcome.error).toBeUndefined();
    const content = DEMO_FILES["README.md"];
    const result = outcome.result;
    if (result === undefined || outcome.grant === undefined) throw new Error(JSON.stringify(outcome));
    expect(result.summary).toBe(`read README.md (${content?.length} characters)`);
    expect(result.structured_content).toEqual({
      path: "README.md",
      content,
      hash: digestOf(content),
      provenance: "untrusted_file",
    });
    expect(result.artifact_refs).toEqual([]);
    expect(result.provenance).toMatchObject({ tool: "repo.read", version: "1", target: "README.md" });
    expect(result.execution_meta).toMatchObject({ attempt: 1, effect: "none" });
    // Writ's own request id, never the one the caller sent (issue 27).
    expect(result.execution_meta.request_id).toMatch(/^[0-9a-f-]{36}$/);

    // The read was recorded on the workspace: the provenance names the revision it produced.
    const ops = await gw.token("ops", { roles: ["admin"] });
    const resource = resourceSchema.parse(
      (await gw.request("GET", `/v1/resources/workspace/${WS}`, { token: ops })).json,
    );
    expect(result.provenance.resource_revision).toBe(String(resource.revision));
    expect(resource.attributes.reads).toEqual({ "README.md": [digestOf(content)] });

    // The gateway consumed the grant before running: a second dispatch of it is refused.
    const { jti } = outcome.grant;
    const exp = new Date(Date.now() + 60_000);
    await expect(gw.gateway.store.consumeGrant({ jti: jti, maxUses: 1, expiresAt: exp })).resolves.toEqual({
      ok: false,
      reason: "exhausted",
    });
    const storeGuard = {
      consume: async (id: string, max: number, expiresAt: number) =>
        (
          await gw.gateway.store.consumeGrant({
            jti: id,
            maxUses: max,
            expiresAt: new Date(expiresAt * 1000),
          })
        ).ok,
    };
    expect(await refusalOf(outcome.grant.token, executorOptions({ replay: storeGuard }))).toBe("replayed");
  });

  it("a grant handed out without execute is not consumed until it is used", async () => {
    const outcome = onlyOutcome(
      await gw.propose(alice, { format: "canonical", payload: canonicalCall("repo.read", README_ARGS) }),
    );
    const jti = outcome.grant?.jti;
    if (jti === undefined) throw new Error("no grant");
    const exp = new Date(Date.now() + 60_000);
    await expect(gw.gateway.store.consumeGrant({ jti: jti, maxUses: 1, expiresAt: exp })).resolves.toEqual({
      ok: true,
      uses: 1,
    });
    await expect(gw.gateway.store.consumeGrant({ jti: jti, maxUses: 1, expiresAt: exp })).resolves.toEqual({
      ok: false,
      reason: "exhausted",
    });
  });

  it("a denied call runs nothing, even with execute", async () => {
    const outcome = onlyOutcome(
      await gw.propose(alice, {
        format: "canonical",
        payload: canonicalCall("repo.read", { workspace: WS, path: ".env" }),
        execute: true,
      }),
    );
    expect(outcome.decision).toBe("deny");
    expect(outcome.result).toBeUndefined();
    expect(JSON.stringify(outcome)).not.toContain("CALC_ENDPOINT");
  });
});

it("the decision log verifies", async () => {
  await expectLogVerifies(gw);
});
