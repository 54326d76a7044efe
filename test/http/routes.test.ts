/**
 * Route modules on their own, against a real-but-small gateway: an in-memory SQLite store, a
 * decision log over it and a real IdentityVerifier; no policy, no pipeline.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.ts";
import { DecisionLog } from "../../src/decisionlog/index.ts";
import { decisionRoutes } from "../../src/http/routes/decisions.ts";
import { resourceRoutes } from "../../src/http/routes/resources.ts";
import { toolRoutes } from "../../src/http/routes/tools.ts";
import { SqliteStore } from "../../src/store/sqlite.ts";
import { errorBody, type Identity, mount, recordSchema, testIdentity } from "./helpers.ts";

let identity: Identity;
let store: SqliteStore;
let log: DecisionLog;

beforeAll(async () => {
  identity = await testIdentity();
  store = await SqliteStore.open(":memory:");
  log = new DecisionLog(store);
});

afterAll(async () => {
  await store?.close();
});

describe("/v1/resources", () => {
  const app = () =>
    mount(
      "/v1/resources",
      resourceRoutes({ identity: identity.verifier, store, log, policy: { revision: undefined } }, ["admin"]),
    );

  it("an admin writes a resource and reads it back", async () => {
    const authorization = await identity.bearer("root", ["admin"]);
    const put = await app().request("/v1/resources/workspace/ws-1", {
      method: "PUT",
      headers: { authorization, "content-type": "application/json" },
      body: JSON.stringify({ owner: "alice", attributes: { plan: "pro" } }),
    });
    expect(put.status).toBe(200);
    expect(recordSchema.parse(await put.json())).toMatchObject({
      type: "workspace",
      id: "ws-1",
      owner: "alice",
      // The caller's tenant when the body names none (it was "default": issue 15).
      tenant: "demo",
      attributes: { plan: "pro" },
    });
    const got = await app().request("/v1/resources/workspace/ws-1", { headers: { authorization } });
    expect(recordSchema.parse(await got.json())).toMatchObject({ owner: "alice", revision: 1 });
  });

  it("checks the caller, then the role, then the body", async () => {
    const bad = { method: "PUT", body: "not json" };
    expect((await app().request("/v1/resources/workspace/ws-2", bad)).status).toBe(401);
    const developer = await identity.bearer("alice");
    const forbidden = await app().request("/v1/resources/workspace/ws-2", {
      ...bad,
      headers: { authorization: developer },
    });
    expect(forbidden.status).toBe(403);
    expect((await errorBody(forbidden)).message).toBe("writing resources needs one of the roles admin");
    const admin = await identity.bearer("root", ["admin"]);
    const malformed = await app().request("/v1/resources/workspace/ws-2", {
      ...bad,
      headers: { authorization: admin },
    });
    expect(malformed.status).toBe(400);
    expect((await errorBody(malformed)).message).toBe("the request body is not JSON");
  });

  it("names the fields a malformed resource gets wrong", async () => {
    const response = await app().request("/v1/resources/workspace/ws-3", {
      method: "PUT",
      headers: { authorization: await identity.bearer("root", ["admin"]) },
      body: JSON.stringify({ owner: "", extra: 1 }),
    });
    expect(response.status).toBe(400);
    const body = await errorBody(response);
    expect(body.message).toBe("the resource is malformed");
    expect(body.field_errors.map((f) => f.path).sort()).toEqual(["", "/owner"]);
  });

  it("a missing resource is a structured 404", async () => {
    const response = await app().request("/v1/resources/workspace/none", {
      headers: { authorization: await identity.bearer("root", ["admin"]) },
    });
    expect(response.status).toBe(404);
    expect(await errorBody(response)).toMatchObject({
      category: "not_found",
      message: "no such resource in your tenant",
      suggested_fix: "check the type and id, or create it with PUT first",
    });
  });
});

describe("/v1/decisions", () => {
  const app = () =>
    mount(
      "/v1/decisions",
      decisionRoutes({ identity: identity.verifier, log, policy: { revision: undefined } }, ["reviewer"]),
    );

  it("a reviewer reads an entry by id and finds it in the filtered list", async () => {
    const entry = await log.append({
      path: "writ/intake",
      input: { format: "canonical" },
      policy_revision: "none",
      subject: "alice",
      tenant: "demo",
      action: null,
      resource: null,
      decision: "error",
      error: "invalid_argument",
      request_id: "req-http-1",
    });
    const authorization = await identity.bearer("rita", ["reviewer"]);
    const one = await app().request(`/v1/decisions/${entry.decision_id}`, { headers: { authorization } });
    expect(one.status).toBe(200);
    expect(recordSchema.parse(await one.json())).toMatchObject({
      decision_id: entry.decision_id,
      request_id: "req-http-1",
    });
    const page = await app().request("/v1/decisions?subject=alice&decision=error&limit=10", {
      headers: { authorization },
    });
    const listed = recordSchema.parse(await page.json());
    expect(JSON.stringify(listed.entries)).toContain(entry.decision_id);
  });

  it("refuses a developer and rejects an unknown query parameter", async () => {
    const developer = await identity.bearer("alice");
    const forbidden = await app().request("/v1/decisions", { headers: { authorization: developer } });
    expect(forbidden.status).toBe(403);
    const reviewer = await identity.bearer("rita", ["reviewer"]);
    const malformed = await app().request("/v1/decisions?colour=red", {
      headers: { authorization: reviewer },
    });
    expect(malformed.status).toBe(400);
    expect((await errorBody(malformed)).message).toBe("the decision query is malformed");
  });

  it("reaching another tenant is off by default: no platform role is configured, whatever the token says", async () => {
    expect(parseConfig({}, "/", "defaults").roles.platform).toEqual([]);
    const authorization = await identity.bearer("pat", ["reviewer", "platform-admin"]);
    const answer = await app().request("/v1/decisions?tenant=evil", { headers: { authorization } });
    expect(answer.status).toBe(403);
    expect((await errorBody(answer)).suggested_fix).toMatch(/none is configured \(roles\.platform\)/);
    // The refused reach is on the log, on the named tenant's record.
    const [logged] = (await log.query({ tenant: "evil" }, 1)).entries;
    expect(logged).toMatchObject({
      path: "writ/tenancy",
      subject: "pat",
      decision: "deny",
      error: "forbidden",
    });
  });

  it("an unknown id is a structured 404", async () => {
    const response = await app().request("/v1/decisions/nope", {
      headers: { authorization: await identity.bearer("rita", ["reviewer"]) },
    });
    expect(response.status).toBe(404);
    expect((await errorBody(response)).message).toBe("no decision nope");
  });
});

describe("/v1/tools", () => {
  const asked: string[] = [];
  const discovery = {
    list: (subject: { id: string }, family: string) => {
      asked.push(`${subject.id}:${family}`);
      return [];
    },
  };
  const app = () => mount("/v1/tools", toolRoutes({ identity: identity.verifier }, discovery));

  it("lists the tools for the verified subject and the family asked for (default: default)", async () => {
    const authorization = await identity.bearer("alice");
    expect(
      await (await app().request("/v1/tools?family=mcp", { headers: { authorization } })).json(),
    ).toEqual({
      tools: [],
    });
    await app().request("/v1/tools", { headers: { authorization } });
    expect(asked).toEqual(["alice:mcp", "alice:default"]);
  });

  it("rejects an unknown family with a field error on /family", async () => {
    const response = await app().request("/v1/tools?family=cobol", {
      headers: { authorization: await identity.bearer("alice") },
    });
    expect(response.status).toBe(400);
    expect((await errorBody(response)).field_errors.map((f) => f.path)).toEqual(["/family"]);
  });
});
