import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writErrorSchema } from "../../src/core/errors.ts";
import { type GrantEnv, requireGrant } from "../../src/executor/index.ts";
import { type GrantRequest, GrantSigner } from "../../src/grants/index.ts";
import { grantRequest } from "../grants/fixtures.ts";

const args = { path: "README.md", content: "hello", dry_run: false };

function request(overrides: Partial<GrantRequest> = {}): GrantRequest {
  return grantRequest(args, {
    act: { name: "repo_write", version: "1.0.0" },
    res: { type: "repo", id: "site" },
    ...overrides,
  });
}

let signer: GrantSigner;
/** The revisions the `/kept` backend keeps, by repository id. */
const revisions = new Map<string, number>([["site", 4]]);
/** Shifts the signer's clock (milliseconds). */
let skew = 0;
let server: ServerType;
let base: string;

beforeAll(async () => {
  signer = await GrantSigner.create({ issuer: "writ" }, { clock: () => Date.now() + skew });
  const app = new Hono<GrantEnv>();
  server = await new Promise<ServerType>((resolve) => {
    const started = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(started));
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  base = `http://127.0.0.1:${(address satisfies AddressInfo).port}`;

  // Writ's key set, served here for convenience; the executor fetches it by URL.
  app.get("/.well-known/jwks.json", (c) => c.json(signer.jwks()));
  const common = { issuer: "writ", audience: "repo-service", keys: `${base}/.well-known/jwks.json` };
  app.post(
    "/repos/:id/files",
    requireGrant({
      ...common,
      action: { name: "repo_write" },
      resource: (c) => ({ type: "repo", id: c.req.param("id") ?? "" }),
    }),
    async (c) => {
      const grant = c.get("grant");
      return c.json({ ok: true, jti: grant.jti, sub: grant.sub, body: await c.req.json() });
    },
  );
  // A backend that keeps its repositories' revisions: a grant decided on another one is stale.
  app.post(
    "/kept/:id/files",
    requireGrant({
      ...common,
      action: { name: "repo_write" },
      resource: (c) => ({ type: "repo", id: c.req.param("id") ?? "" }),
      resourceRevision: async ({ id }) => revisions.get(id) ?? null,
    }),
    (c) => c.json({ ok: true, rev: c.get("grant").res.rev ?? null }),
  );
  app.post("/mcp/call", requireGrant({ ...common, argsField: "arguments" }), (c) =>
    c.json({ ok: true, jti: c.get("grant").jti }),
  );
});

afterAll(async () => {
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
});

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function refusal(response: Response) {
  const body: unknown = await response.json();
  const parsed = writErrorSchema.extend({ code: writErrorSchema.shape.message }).parse(body);
  expect(parsed.suggested_fix.length).toBeGreaterThan(5);
  return parsed;
}

describe("requireGrant on a served hono app", () => {
  it("lets a request with a valid grant through and exposes the claims", async () => {
    const { token, claims } = await signer.issue(request());
    const response = await post("/repos/site/files", args, { authorization: `Writ-Grant ${token}` });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, jti: claims.jti, sub: "alice", body: args });
  });

  it("refuses the same grant a second time (single use)", async () => {
    const { token } = await signer.issue(request());
    expect((await post("/repos/site/files", args, { authorization: `Writ-Grant ${token}` })).status).toBe(
      200,
    );
    const again = await post("/repos/site/files", args, { authorization: `Writ-Grant ${token}` });
    expect(again.status).toBe(403);
    expect(await refusal(again)).toMatchObject({
      status: "failed",
      category: "policy_denied",
      code: "replayed",
    });
  });

  it("answers 401 without a grant, naming the scheme to use", async () => {
    const response = await post("/repos/site/files", args);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Writ-Grant error="missing_grant"');
    const body = await refusal(response);
    expect(body).toMatchObject({ category: "unauthenticated", code: "missing_grant", retryable: false });
    expect(body.suggested_fix).toMatch(/Writ-Grant/);
  });

  it("refuses arguments that differ from the approved ones", async () => {
    const { token } = await signer.issue(request());
    const response = await post(
      "/repos/site/files",
      { ...args, path: ".github/workflows/x.yml" },
      { "x-writ-grant": token },
    );
    expect(response.status).toBe(403);
    expect(await refusal(response)).toMatchObject({ category: "policy_denied", code: "args_mismatch" });
  });

  it("refuses a grant for another resource than the one in the path", async () => {
    const { token } = await signer.issue(request());
    const response = await post("/repos/other/files", args, { authorization: `Writ-Grant ${token}` });
    expect(response.status).toBe(403);
    expect(await refusal(response)).toMatchObject({ code: "resource_mismatch" });
  });

  it("refuses with 409 stale_revision a grant decided on another revision than the backend keeps", async () => {
    const current = await signer.issue(request({ res: { type: "repo", id: "site", rev: "4" } }));
    const ok = await post("/kept/site/files", args, { authorization: `Writ-Grant ${current.token}` });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true, rev: "4" });

    const stale = await signer.issue(request({ res: { type: "repo", id: "site", rev: "3" } }));
    const response = await post("/kept/site/files", args, { authorization: `Writ-Grant ${stale.token}` });
    expect(response.status).toBe(409);
    const body = await refusal(response);
    expect(body).toMatchObject({ category: "stale_revision", code: "stale_revision" });
    expect(body.message).toMatch(/is at revision 4, but the grant was decided on revision 3/);
    // Refused before its use: once the backend is back at revision 3 (say, a restored backup), it runs.
    revisions.set("site", 3);
    try {
      expect(
        (await post("/kept/site/files", args, { authorization: `Writ-Grant ${stale.token}` })).status,
      ).toBe(200);
    } finally {
      revisions.set("site", 4);
    }
    // Decided on the resource's absence: stale once it exists; a resource that is gone is stale too.
    const absent = await signer.issue(request({ res: { type: "repo", id: "site" } }));
    expect(
      (await post("/kept/site/files", args, { authorization: `Writ-Grant ${absent.token}` })).status,
    ).toBe(409);
    const gone = await signer.issue(request({ res: { type: "repo", id: "gone", rev: "1" } }));
    const goneAnswer = await post("/kept/gone/files", args, { authorization: `Writ-Grant ${gone.token}` });
    expect(goneAnswer.status).toBe(409);
    expect((await refusal(goneAnswer)).message).toMatch(/repo:gone no longer exists/);
  });

  it("refuses an expired grant with 401", async () => {
    skew = -600_000;
    const { token } = await signer.issue(request()).finally(() => {
      skew = 0;
    });
    const response = await post("/repos/site/files", args, { authorization: `Writ-Grant ${token}` });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Writ-Grant error="expired"');
    expect(await refusal(response)).toMatchObject({ category: "unauthenticated", code: "expired" });
  });

  it("reads the arguments from a body field when configured", async () => {
    const { token, claims } = await signer.issue(request());
    const ok = await post("/mcp/call", { name: "repo_write", arguments: args }, { "x-writ-grant": token });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true, jti: claims.jti });

    const { token: second } = await signer.issue(request());
    const missing = await post("/mcp/call", { name: "repo_write" }, { "x-writ-grant": second });
    expect(missing.status).toBe(403);
    expect((await refusal(missing)).message).toMatch(/no "arguments" field/);
  });

  it("answers 400 for a body that is not JSON", async () => {
    const { token } = await signer.issue(request());
    const response = await post("/repos/site/files", "{not json", { authorization: `Writ-Grant ${token}` });
    expect(response.status).toBe(400);
    expect(writErrorSchema.parse(await response.json())).toMatchObject({ category: "invalid_argument" });
  });
});
