/**
 * The HTTP middleware on its own: request ids, authentication (a real IdentityVerifier), roles,
 * and the one error path that turns whatever is thrown into a WritError body.
 */
import { Hono } from "hono";
import { beforeAll, describe, expect, it } from "vitest";
import { WritError } from "../../src/core/errors.ts";
import type { Subject } from "../../src/core/types.ts";
import type { HttpEnv } from "../../src/http/env.ts";
import { authenticate, type BearerVerifier, requireRole } from "../../src/http/middleware/auth/index.ts";
import { requestId } from "../../src/http/middleware/request-id/index.ts";
import { errorBody, type Identity, mount, recordSchema, testIdentity } from "./helpers.ts";

let identity: Identity;

beforeAll(async () => {
  identity = await testIdentity();
});

describe("requestId", () => {
  const app = new Hono<HttpEnv>().use(requestId(() => "generated")).get("/", (c) => c.text(c.var.requestId));

  it("keeps the caller's X-Request-Id as sent", async () => {
    const response = await app.request("/", { headers: { "x-request-id": "req 1/a=b" } });
    expect(await response.text()).toBe("req 1/a=b");
  });

  it("makes one when the caller sent none, and adds no response header", async () => {
    const response = await app.request("/");
    expect(await response.text()).toBe("generated");
    expect(response.headers.get("x-request-id")).toBeNull();
  });

  it("makes UUIDs by default", async () => {
    const app = new Hono<HttpEnv>().use(requestId()).get("/", (c) => c.text(c.var.requestId));
    expect(await (await app.request("/")).text()).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("authenticate", () => {
  function whoami(verifier: BearerVerifier): Hono {
    return mount(
      "/whoami",
      new Hono<HttpEnv>().get("/", authenticate(verifier), (c) =>
        c.json({ id: c.var.subject.id, tenant: c.var.subject.tenant, roles: c.var.subject.roles }),
      ),
    );
  }

  it("sets the verified subject on the context", async () => {
    const response = await whoami(identity.verifier).request("/whoami", {
      headers: { authorization: await identity.bearer("alice", ["developer"]) },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ id: "alice", tenant: "demo", roles: ["developer"] });
  });

  it("verifies the token once per request", async () => {
    const calls: Array<string | undefined> = [];
    const counting: BearerVerifier = {
      verify: (header) => {
        calls.push(header);
        return identity.verifier.verify(header);
      },
    };
    const authorization = await identity.bearer("alice");
    const app = mount(
      "/twice",
      new Hono<HttpEnv>().get("/", authenticate(counting), (c) => c.text(c.var.subject.id)),
    );
    expect(await (await app.request("/twice", { headers: { authorization } })).text()).toBe("alice");
    expect(calls).toEqual([authorization]);
  });

  it("answers a missing token with the unauthenticated WritError, before the handler runs", async () => {
    let ran = false;
    const app = mount(
      "/x",
      new Hono<HttpEnv>().get("/", authenticate(identity.verifier), (c) => {
        ran = true;
        return c.text("ran");
      }),
    );
    const response = await app.request("/x");
    expect(response.status).toBe(401);
    const body = await errorBody(response);
    expect(body).toMatchObject({ status: "failed", category: "unauthenticated", effect_committed: false });
    expect(ran).toBe(false);
  });

  it("answers a forged token with 401 too", async () => {
    const other = await testIdentity();
    const response = await whoami(identity.verifier).request("/whoami", {
      headers: { authorization: await other.bearer("mallory") },
    });
    expect(response.status).toBe(401);
    expect((await errorBody(response)).category).toBe("unauthenticated");
  });
});

describe("requireRole", () => {
  const subject = (roles: string[]): Subject => ({
    id: "bob",
    tenant: "demo",
    roles,
    scopes: [],
    issuer: "test",
    claims: {},
  });
  const fixed = (roles: string[]): BearerVerifier => ({ verify: async () => subject(roles) });
  const app = (roles: string[]) =>
    mount(
      "/log",
      new Hono<HttpEnv>().get(
        "/",
        authenticate(fixed(roles)),
        requireRole(["reviewer", "auditor"], "reading the log"),
        (c) => c.text("ok"),
      ),
    );

  it("lets a subject with one of the roles through", async () => {
    expect((await app(["developer", "auditor"]).request("/log")).status).toBe(200);
  });

  it("refuses anyone else with forbidden, naming the operation and the roles", async () => {
    const response = await app(["developer"]).request("/log");
    expect(response.status).toBe(403);
    expect(await errorBody(response)).toEqual({
      status: "failed",
      category: "forbidden",
      retryable: false,
      message: "reading the log needs one of the roles reviewer, auditor",
      field_errors: [],
      suggested_fix: "use a token that carries one of those roles",
      effect_committed: false,
    });
  });
});

describe("the error path", () => {
  const app = mount(
    "/fail",
    new Hono<HttpEnv>()
      .get("/writ", () => {
        throw new WritError("conflict", "busy", { suggestedFix: "retry", retryable: true });
      })
      .get("/bug", () => {
        throw new TypeError("undefined is not a function");
      }),
  );

  it("answers a WritError with its body and its category's status", async () => {
    const response = await app.request("/fail/writ");
    expect(response.status).toBe(409);
    expect(await errorBody(response)).toMatchObject({
      category: "conflict",
      message: "busy",
      retryable: true,
    });
  });

  it("answers anything else as internal, without its message", async () => {
    const original = console.error;
    console.error = () => {};
    try {
      const response = await app.request("/fail/bug");
      expect(response.status).toBe(500);
      const body = recordSchema.parse(await response.json());
      expect(body).toMatchObject({ category: "internal", message: "Writ failed while handling the request" });
      expect(JSON.stringify(body)).not.toContain("undefined is not a function");
    } finally {
      console.error = original;
    }
  });

  it("answers an unknown route with a structured 404", async () => {
    const response = await app.request("/nowhere", { method: "DELETE" });
    expect(response.status).toBe(404);
    expect((await errorBody(response)).message).toBe("no route DELETE /nowhere");
  });
});
