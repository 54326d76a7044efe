/**
 * Identity end to end: bearer tokens from the test issuer (JWKS served over HTTP on loopback) are
 * verified for real; every refused token is a 401 `unauthenticated`, and the attempt is in the
 * decision log.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { b64, makeKey, now, sign } from "../identity/helpers.ts";
import { startTestGateway, TEST_AUDIENCE, TEST_ISSUER, type TestGateway } from "../support/gateway.ts";
import { canonicalCall, errorOf, expectLogVerifies, logEntries, onlyOutcome, README_ARGS } from "./api.ts";

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});

afterAll(async () => {
  await gw?.close();
});

const payload = canonicalCall("repo.read", README_ARGS);

const badTokens: Array<{ name: string; token: () => Promise<string | undefined>; message: RegExp }> = [
  { name: "no token", token: async () => undefined, message: /no Authorization header/ },
  { name: "a garbage token", token: async () => "garbage", message: /not a well-formed signed JWT/ },
  {
    name: "an expired token",
    token: () => gw.token("alice", { claims: { iat: now() - 7200, exp: now() - 3600 } }),
    message: /expired/,
  },
  {
    name: "a token for another audience",
    token: () => gw.token("alice", { claims: { aud: "some-other-api" } }),
    message: /audience/,
  },
  {
    name: "a token from an unknown issuer",
    token: async () =>
      sign(await makeKey("EdDSA"), { iss: "https://unknown-idp.test", aud: TEST_AUDIENCE, sub: "alice" }),
    message: /issuer "https:\/\/unknown-idp\.test" is not configured/,
  },
  {
    name: "a token of the right issuer signed with another key",
    token: async () => sign(await makeKey("EdDSA"), { iss: TEST_ISSUER, aud: TEST_AUDIENCE, sub: "alice" }),
    message: /no key .* matches|signature/,
  },
  {
    name: "an unsigned token (alg none)",
    token: async () =>
      `${b64({ alg: "none", typ: "JWT" })}.${b64({ iss: TEST_ISSUER, aud: TEST_AUDIENCE, sub: "alice", exp: now() + 600 })}.`,
    message: /unsigned/,
  },
];

describe("refused bearer tokens", () => {
  for (const bad of badTokens) {
    it(`${bad.name} → 401 unauthenticated, logged`, async () => {
      const token = await bad.token();
      const requestId = `identity-${randomUUID()}`;
      const error = errorOf(await gw.propose(token, { format: "canonical", payload }, requestId), 401);
      expect(error).toMatchObject({ status: "failed", category: "unauthenticated", effect_committed: false });
      expect(error.message).toMatch(bad.message);
      if (token !== undefined && token.length > 20) expect(error.message).not.toContain(token);

      const entries = (await logEntries(gw, { decision: "error" })).filter(
        (e) => e.caller_request_id === requestId,
      );
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        path: "writ/intake",
        decision: "error",
        error: "unauthenticated",
        subject: null,
        action: "repo.read",
        resource: { type: "workspace", id: "ws-demo" },
        grant_jti: null,
      });
    });
  }

  it("a valid token of the same issuer is accepted (the refusals above are not a broken setup)", async () => {
    const outcome = onlyOutcome(await gw.propose(await gw.token("alice"), { format: "canonical", payload }));
    expect(outcome.decision).toBe("allow");
  });

  it("the other authenticated routes refuse a missing token too", async () => {
    for (const route of [
      "/v1/tools",
      "/v1/decisions",
      "/v1/decisions/x",
      "/v1/resources/workspace/ws-demo",
    ]) {
      expect(errorOf(await gw.request("GET", route), 401).category).toBe("unauthenticated");
    }
  });
});

it("the decision log verifies", async () => {
  await expectLogVerifies(gw);
});
