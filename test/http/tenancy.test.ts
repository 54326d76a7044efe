/**
 * Tenants stay apart on the administrative and review API (issue 15), over real HTTP with real
 * JWTs: an admin and a reviewer of tenant `evil` can neither see nor change tenant `demo`'s
 * resources, decisions or approvals; a caller with the configured platform role can, by naming
 * the tenant, and each such reach (and each refused attempt) is on the decision log.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pendingApproval } from "../console/helpers.ts";
import {
  canonicalCall,
  errorOf,
  expectLogVerifies,
  logEntries,
  logPageSchema,
  onlyOutcome,
  README_ARGS,
  resourceSchema,
  WS,
} from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { withPlatformRole } from "../support/tenancy.ts";

let gw: TestGateway;
/** Tokens: tenant demo's admin, reviewer, developer and approver; tenant evil's; the platform's. */
const t = { demoAdmin: "", demoReviewer: "", alice: "", evilAdmin: "", evilReviewer: "", platform: "" };

beforeAll(async () => {
  gw = await startTestGateway({
    configure: withPlatformRole,
  });
  t.demoAdmin = await gw.token("ops", { roles: ["admin"] });
  t.demoReviewer = await gw.token("rita", { roles: ["reviewer"] });
  t.alice = await gw.token("alice");
  t.evilAdmin = await gw.token("mallory", { tenant: "evil", roles: ["admin"] });
  t.evilReviewer = await gw.token("mallory", { tenant: "evil", roles: ["reviewer", "maintainer"] });
  t.platform = await gw.token("pat", { tenant: "ops", roles: ["platform-admin", "admin", "reviewer"] });
});

afterAll(async () => {
  await gw?.close();
});

/** The log entries a request left (read as the operator). */
async function loggedFor(requestId: string) {
  return (await logEntries(gw)).filter((e) => e.caller_request_id === requestId);
}

describe("resources", () => {
  it("another tenant's resource is absent to an admin: same 404 as a missing one", async () => {
    const theirs = await gw.request("GET", `/v1/resources/workspace/${WS}`, { token: t.evilAdmin });
    const missing = await gw.request("GET", "/v1/resources/workspace/no-such", { token: t.evilAdmin });
    expect(errorOf(theirs, 404)).toEqual(errorOf(missing, 404));
    const ours = await gw.request("GET", `/v1/resources/workspace/${WS}`, { token: t.demoAdmin });
    expect(resourceSchema.parse(ours.json)).toMatchObject({ tenant: "demo" });
  });

  it("an admin cannot write into another tenant, nor take over a name it holds; refusals are logged", async () => {
    const before = resourceSchema.parse(
      (await gw.request("GET", `/v1/resources/workspace/${WS}`, { token: t.demoAdmin })).json,
    );
    const dotEnv = { owner: "mallory", attributes: { readable: [".env", "**"] } };

    const intoDemo = randomUUID();
    const named = await gw.request("PUT", `/v1/resources/workspace/${WS}`, {
      token: t.evilAdmin,
      body: { ...dotEnv, tenant: "demo" },
      requestId: intoDemo,
    });
    expect(errorOf(named, 403)).toMatchObject({ category: "forbidden" });
    expect(await loggedFor(intoDemo)).toMatchObject([
      {
        path: "writ/tenancy",
        subject: "mallory",
        tenant: "demo",
        decision: "deny",
        error: "forbidden",
        reasons: [{ code: "cross_tenant_refused" }],
      },
    ]);

    const takeover = randomUUID();
    const held = await gw.request("PUT", `/v1/resources/workspace/${WS}`, {
      token: t.evilAdmin,
      body: dotEnv,
      requestId: takeover,
    });
    const refusal = errorOf(held, 409);
    expect(refusal.category).toBe("conflict");
    // It names the resource the caller named, nothing of its holder.
    expect(refusal.message).toBe(`workspace/${WS} cannot be written by tenant evil`);
    expect(await loggedFor(takeover)).toMatchObject([
      {
        path: "writ/resources",
        tenant: "evil",
        decision: "deny",
        reasons: [{ code: "resource_held_elsewhere" }],
      },
    ]);

    const after = resourceSchema.parse(
      (await gw.request("GET", `/v1/resources/workspace/${WS}`, { token: t.demoAdmin })).json,
    );
    expect(after).toEqual(before);
  });

  it("a write defaults to the caller's tenant and is logged with the old and new revision", async () => {
    const requestId = randomUUID();
    const put = await gw.request("PUT", "/v1/resources/workspace/ws-evil", {
      token: t.evilAdmin,
      body: { owner: "mallory", attributes: { plan: "pro" } },
      requestId,
    });
    expect(put.status, put.text).toBe(200);
    expect(resourceSchema.parse(put.json)).toMatchObject({ tenant: "evil", revision: 1 });
    const [entry] = await loggedFor(requestId);
    expect(entry).toMatchObject({ path: "writ/resources", tenant: "evil", decision: "allow" });
    expect(entry?.input).toMatchObject({ before: null, after: { revision: 1, tenant: "evil" } });
    // Tenant demo's admin does not see it.
    const hidden = await gw.request("GET", "/v1/resources/workspace/ws-evil", { token: t.demoAdmin });
    errorOf(hidden, 404);
  });

  it("a platform admin reads and writes any tenant's resource by naming it, and is logged", async () => {
    const requestId = randomUUID();
    const read = await gw.request("GET", `/v1/resources/workspace/${WS}?tenant=demo`, {
      token: t.platform,
      requestId,
    });
    expect(resourceSchema.parse(read.json)).toMatchObject({ tenant: "demo" });
    expect(await loggedFor(requestId)).toMatchObject([
      {
        path: "writ/tenancy",
        subject: "pat",
        tenant: "demo",
        decision: "allow",
        action: "GET /v1/resources",
        input: { actor: { id: "pat", tenant: "ops" }, target_tenant: "demo", surface: "GET /v1/resources" },
      },
    ]);
    // Without naming it, the platform admin is in its own tenant like everyone.
    errorOf(await gw.request("GET", `/v1/resources/workspace/${WS}`, { token: t.platform }), 404);
  });
});

describe("decisions", () => {
  let demoDecision: string;

  beforeAll(async () => {
    const outcome = onlyOutcome(
      await gw.propose(t.alice, { format: "canonical", payload: canonicalCall("repo.read", README_ARGS) }),
    );
    demoDecision = outcome.decision_id;
    await gw.propose(t.alice, { format: "canonical", payload: canonicalCall("repo.read", README_ARGS) });
  });

  const list = async (token: string, query = "") => {
    const answer = await gw.request("GET", `/v1/decisions${query}`, { token });
    expect(answer.status, answer.text).toBe(200);
    return logPageSchema.parse(answer.json);
  };

  it("a reviewer of another tenant sees none of demo's entries, by list, filter, id or cursor", async () => {
    const theirs = await list(t.evilReviewer, "?limit=500");
    expect(theirs.entries.map((e) => e.tenant).filter((x) => x !== "evil")).toEqual([]);
    expect(JSON.stringify(theirs)).not.toContain(demoDecision);
    expect((await list(t.evilReviewer, "?subject=alice")).entries).toEqual([]);

    const byId = await gw.request("GET", `/v1/decisions/${demoDecision}`, { token: t.evilReviewer });
    const none = await gw.request("GET", "/v1/decisions/no-such", { token: t.evilReviewer });
    expect(errorOf(byId, 404).message).toBe(`no decision ${demoDecision}`);
    errorOf(none, 404);

    const requestId = randomUUID();
    const asked = await gw.request("GET", "/v1/decisions?tenant=demo", { token: t.evilReviewer, requestId });
    expect(errorOf(asked, 403).suggested_fix).toMatch(/platform role/);
    expect(await loggedFor(requestId)).toMatchObject([
      { path: "writ/tenancy", decision: "deny", tenant: "demo" },
    ]);

    // demo's reviewer sees demo's entries; its cursor means nothing in evil's scope.
    const ours = await list(t.demoReviewer, "?limit=1");
    expect(ours.entries.map((e) => e.tenant)).toEqual(["demo"]);
    expect(ours.next_cursor).toBeDefined();
    const foreign = await gw.request("GET", `/v1/decisions?cursor=${ours.next_cursor}`, {
      token: t.evilReviewer,
    });
    expect(errorOf(foreign, 400).message).toBe("the cursor is not one this log handed out");
    expect((await gw.request("GET", `/v1/decisions/${demoDecision}`, { token: t.demoReviewer })).status).toBe(
      200,
    );
  });

  it("a platform reviewer reads a named tenant or all of them, and each use is logged", async () => {
    const requestId = randomUUID();
    const demo = await gw.request("GET", "/v1/decisions?tenant=demo&limit=500", {
      token: t.platform,
      requestId,
    });
    const page = logPageSchema.parse(demo.json);
    expect(page.entries.map((e) => e.decision_id)).toContain(demoDecision);
    expect(new Set(page.entries.map((e) => e.tenant))).toEqual(new Set(["demo"]));
    expect(await loggedFor(requestId)).toMatchObject([
      {
        path: "writ/tenancy",
        subject: "pat",
        tenant: "demo",
        decision: "allow",
        action: "GET /v1/decisions",
      },
    ]);

    const everyId = randomUUID();
    const all = await gw.request("GET", "/v1/decisions?tenant=*&limit=500", {
      token: t.platform,
      requestId: everyId,
    });
    const tenants = new Set(logPageSchema.parse(all.json).entries.map((e) => e.tenant));
    expect(tenants).toContain("demo");
    expect(tenants).toContain("evil");
    expect(await loggedFor(everyId)).toMatchObject([
      { path: "writ/tenancy", tenant: null, decision: "allow" },
    ]);

    const one = await gw.request("GET", `/v1/decisions/${demoDecision}?tenant=demo`, { token: t.platform });
    expect(one.status, one.text).toBe(200);
    await expectLogVerifies(gw);
  });
});

describe("approvals", () => {
  const approvalId = () => pendingApproval(gw);

  it("an approver of another tenant can neither list, read nor decide demo's request", async () => {
    const id = await approvalId();
    const listed = await gw.request("GET", "/v1/approvals?limit=500", { token: t.evilReviewer });
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain(id);
    errorOf(await gw.request("GET", `/v1/approvals/${id}`, { token: t.evilReviewer }), 404);
    for (const verb of ["approve", "reject"]) {
      const refused = await gw.request("POST", `/v1/approvals/${id}/${verb}`, {
        token: t.evilReviewer,
        body: { reason: "mine now" },
      });
      expect(refused.status, refused.text).toBe(403);
    }
    const maintainer = await gw.token("carol", { roles: ["maintainer"] });
    const still = await gw.request("GET", `/v1/approvals/${id}`, { token: maintainer });
    expect(still.json).toMatchObject({ id, status: "pending" });
  });

  it("a platform admin lists and reads demo's requests by naming the tenant (logged), but cannot decide them", async () => {
    const id = await approvalId();
    const requestId = randomUUID();
    const listed = await gw.request("GET", "/v1/approvals?tenant=demo&limit=500", {
      token: t.platform,
      requestId,
    });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.text).toContain(id);
    expect(listed.text).not.toContain('"grant"');
    expect(await loggedFor(requestId)).toMatchObject([
      { path: "writ/tenancy", tenant: "demo", decision: "allow", action: "GET /v1/approvals" },
    ]);
    const one = await gw.request("GET", `/v1/approvals/${id}?tenant=demo`, { token: t.platform });
    expect(one.json).toMatchObject({ id, status: "pending" });
    errorOf(await gw.request("GET", `/v1/approvals/${id}?tenant=evil`, { token: t.platform }), 404);
    errorOf(await gw.request("GET", "/v1/approvals?tenant=*", { token: t.platform }), 400);
    errorOf(await gw.request("GET", "/v1/approvals?tenant=demo", { token: t.evilReviewer }), 403);
    const decided = await gw.request("POST", `/v1/approvals/${id}/approve`, { token: t.platform, body: {} });
    expect(decided.status, decided.text).toBe(403);
  });
});

describe("/metrics", () => {
  it("names no subject or tenant in its labels", async () => {
    const metrics = await gw.request("GET", "/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.text).not.toMatch(/alice|mallory|pat\b|tenant=|subject=/);
  });
});
