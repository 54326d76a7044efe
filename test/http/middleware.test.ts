/**
 * The HTTP middleware on its own: request ids, authentication (a real IdentityVerifier), roles,
 * and the one error path that turns whatever is thrown into a WritError body.
 */
import { Hono } from "hono";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
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

describe("requestId (issue 27)", () => {
  let minted = 0;
  const app = new Hono<HttpEnv>()
    .use(requestId(() => `writ-${++minted}`))
    .get("/", (c) => c.json({ own: c.var.requestId, caller: c.var.callerRequestId ?? null }));
  const ids = async (headers: Record<string, string> = {}) => {
    const response = await app.request("/", { headers });
    const body = z.object({ own: z.string(), caller: z.string().nullable() }).parse(await response.json());
    return { header: response.headers.get("x-request-id"), ...body };
  };

  it("mints Writ's own id for every request, answers it, and keeps the caller's beside it", async () => {
    const first = await ids({ "x-request-id": "trace-1_a=b" });
    expect(first.own).toMatch(/^writ-\d+$/);
    expect(first).toMatchObject({ caller: "trace-1_a=b", header: first.own });
    // The same id sent twice (or another caller's copied) never names Writ's records.
    const second = await ids({ "x-request-id": "trace-1_a=b" });
    expect(second.own).not.toBe(first.own);
    expect(second.caller).toBe("trace-1_a=b");
  });

  it("drops a caller's id out of hono's bounds: over 255 characters, or other characters", async () => {
    for (const sent of ["x".repeat(256), "x".repeat(12 * 1024), "req 1", "a/b", "é", "a\tb", ""]) {
      const answer = await ids({ "x-request-id": sent });
      expect(answer.caller, JSON.stringify(sent.slice(0, 20))).toBeNull();
      expect(answer.own).toMatch(/^writ-\d+$/);
    }
    expect((await ids({ "x-request-id": "x".repeat(255) })).caller).toBe("x".repeat(255));
  });

  it("makes UUIDs by default", async () => {
    const app = new Hono<HttpEnv>().use(requestId()).get("/", (c) => c.text(c.var.requestId));
    expect(await (await app.request("/", { headers: { "x-request-id": "mine" } })).text()).toMatch(
      /^[0-9a-f-]{36}$/,
    );
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
