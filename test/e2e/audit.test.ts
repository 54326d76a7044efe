/**
 * Every security-relevant event on the record (issue 15, "Audit"): each execution and each of its
 * refusals, refused approval decisions, 401/403 on the admin and review APIs, 400/413 bodies, a
 * flood of bad requests aggregated per source, and a grant left usable when its backend's
 * credential cannot be read. Each found in the decision log by its request id.
 */
import { randomUUID } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import {
  canonicalCall,
  errorOf,
  type LogEntry,
  logEntries,
  onlyOutcome,
  pendingApproval as pendingApprovalOf,
  README_ARGS,
  WS,
} from "./api.ts";

let gw: TestGateway;
let alice: string;
let bob: string;
let carol: string;
let payments: Server;
let paymentsUrl: string;
let tokenFile: string;
const PAYMENTS_TOKEN = "s3cret-payments-token";

beforeAll(async () => {
  // A payments backend that answers a draft only with the right credential.
  payments = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const ok = req.headers.authorization === `Bearer ${PAYMENTS_TOKEN}`;
      res.writeHead(ok ? 201 : 401, { "content-type": "application/json" });
      res.end(JSON.stringify(ok ? { draft_id: `d-${randomUUID()}`, status: "draft" } : { error: "no" }));
    });
  });
  await new Promise<void>((resolve) => payments.listen(0, "127.0.0.1", resolve));
  paymentsUrl = `http://127.0.0.1:${(payments.address() as AddressInfo).port}/drafts`;
  gw = await startTestGateway({
    bodyLimitBytes: 64 * 1024,
    configure: (document, tmp) => {
      tokenFile = path.join(tmp, "payments-token");
      const tools = z.array(z.record(z.string(), z.unknown())).parse(document.tools);
      return {
        ...document,
        decision_log: { refusal_window_ms: 300 },
        credentials: { payments: { from: "file", path: tokenFile } },
        tools: tools.map((t) =>
          t.name === "create_payment_draft"
            ? {
                ...t,
                backend: { kind: "http", method: "POST", url: paymentsUrl, credentials_ref: "payments" },
              }
            : t,
        ),
      };
    },
  });
  alice = await gw.token("alice");
  bob = await gw.token("bob");
  carol = await gw.token("carol", { roles: ["maintainer"] });
});
afterAll(async () => {
  await gw?.close();
  await new Promise<void>((resolve) => (payments ? payments.close(() => resolve()) : resolve()));
});

async function grantFor(token: string, tool: string, args: Record<string, unknown>): Promise<string> {
  const outcome = onlyOutcome(
    await gw.propose(token, { format: "canonical", payload: canonicalCall(tool, args) }),
  );
  if (!outcome.grant) throw new Error(`no grant: ${JSON.stringify(outcome)}`);
  return outcome.grant.token;
}

function execute(token: string, body: unknown, requestId: string) {
  return gw.request("POST", "/v1/execute", { token, body, requestId });
}

/** The entries of one request, oldest first. */
async function entriesOf(requestId: string): Promise<LogEntry[]> {
  return (await logEntries(gw)).filter((e) => e.caller_request_id === requestId).reverse();
}

async function onlyEntryOf(requestId: string): Promise<LogEntry> {
  const entries = await entriesOf(requestId);
  expect(entries, JSON.stringify(entries)).toHaveLength(1);
  return entries[0]!;
}

describe("POST /v1/execute is on the record", () => {
  it("logs a success with the grant's jti and decision, and a summary without the content", async () => {
    const grant = await grantFor(alice, "repo_read", README_ARGS);
    const rid = randomUUID();
    const answer = await execute(alice, { grant, tool: "repo_read", arguments: README_ARGS }, rid);
    expect(answer.status, answer.text).toBe(200);
    const entry = await onlyEntryOf(rid);
    expect(entry).toMatchObject({ path: "writ/execute", decision: "allow", subject: "alice", error: null });
    expect(entry.grant_jti).toMatch(/.+/);
    const input = z
      .object({ grant: z.object({ jti: z.string(), decision_id: z.string(), verified: z.literal(true) }) })
      .passthrough()
      .parse(entry.input);
    expect(input.grant.jti).toBe(entry.grant_jti);
    expect(JSON.stringify(entry.input)).not.toContain("sum(a, b)");
  });

  it("logs a replay, another subject's grant, a forged signature and a digest mismatch, each with its code", async () => {
    const cases: Array<{ code: string; run: (rid: string) => Promise<unknown> }> = [];
    const spent = await grantFor(alice, "repo_read", README_ARGS);
    expect(
      (await execute(alice, { grant: spent, tool: "repo_read", arguments: README_ARGS }, randomUUID()))
        .status,
    ).toBe(200);
    cases.push({
      code: "replayed",
      run: (rid) => execute(alice, { grant: spent, tool: "repo_read", arguments: README_ARGS }, rid),
    });
    const alicesGrant = await grantFor(alice, "repo_read", README_ARGS);
    cases.push({
      code: "wrong_subject",
      run: (rid) => execute(bob, { grant: alicesGrant, tool: "repo_read", arguments: README_ARGS }, rid),
    });
    const [header, payload] = alicesGrant.split(".");
    const forged = `${header}.${payload}.${Buffer.from("not the signature").toString("base64url")}`;
    cases.push({
      code: "bad_signature",
      run: (rid) => execute(alice, { grant: forged, tool: "repo_read", arguments: README_ARGS }, rid),
    });
    cases.push({
      code: "args_mismatch",
      run: (rid) =>
        execute(
          alice,
          { grant: alicesGrant, tool: "repo_read", arguments: { workspace: WS, path: "src/sum.ts" } },
          rid,
        ),
    });
    for (const c of cases) {
      const rid = randomUUID();
      const answer = z.object({ status: z.number() }).parse(await c.run(rid));
      expect(answer.status, c.code).toBe(403);
      const entry = await onlyEntryOf(rid);
      expect(entry, c.code).toMatchObject({ path: "writ/execute", decision: "deny", error: "policy_denied" });
      expect(entry.reasons[0]?.code, c.code).toBe(c.code);
    }
    // The stolen grant names its owner; the forged one is recorded as unverified.
    const stolen = (await logEntries(gw, { path: "writ/execute" })).find(
      (e) => e.reasons[0]?.code === "wrong_subject",
    );
    expect(stolen).toMatchObject({ subject: "bob" });
    expect(JSON.stringify(stolen?.input)).toContain('"issued_to":"alice"');
  });

  it("leaves the grant usable when the backend's credential cannot be read, and logs the failure", async () => {
    await rm(tokenFile, { force: true });
    const args = { account: "acct-alice", amount: 10, currency: "EUR" };
    const grant = await grantFor(alice, "create_payment_draft", args);
    const rid = randomUUID();
    const failed = errorOf(
      await execute(alice, { grant, tool: "create_payment_draft", arguments: args }, rid),
      503,
    );
    expect(failed).toMatchObject({ category: "backend_unavailable", effect_committed: false });
    expect(failed.message).not.toContain(tokenFile);
    expect(await onlyEntryOf(rid)).toMatchObject({
      path: "writ/execute",
      decision: "error",
      error: "backend_unavailable",
    });

    await writeFile(tokenFile, `${PAYMENTS_TOKEN}\n`);
    const again = await execute(
      alice,
      { grant, tool: "create_payment_draft", arguments: args },
      randomUUID(),
    );
    expect(again.status, again.text).toBe(200);
  });
});

describe("refused approval decisions are on the record", () => {
  const pendingApproval = () =>
    pendingApprovalOf(gw, { before: "a + b", after: `a + b /* ${randomUUID()} */` });

  it("logs a wrong role, another tenant, the requester's own, a blank reason and an already decided request", async () => {
    const id = await pendingApproval();
    const evilMaintainer = await gw.token("eve", { tenant: "evil", roles: ["maintainer"] });
    const attempts: Array<{ token: string; verb: string; body: unknown; status: number; category: string }> =
      [
        { token: bob, verb: "approve", body: {}, status: 403, category: "forbidden" },
        { token: evilMaintainer, verb: "approve", body: {}, status: 403, category: "forbidden" },
        { token: alice, verb: "reject", body: { reason: "mine" }, status: 403, category: "forbidden" },
        {
          token: carol,
          verb: "reject",
          body: { reason: " \t\n " },
          status: 400,
          category: "invalid_argument",
        },
      ];
    for (const a of attempts) {
      const rid = randomUUID();
      const answer = await gw.request("POST", `/v1/approvals/${id}/${a.verb}`, {
        token: a.token,
        body: a.body,
        requestId: rid,
      });
      expect(errorOf(answer, a.status).category).toBe(a.category);
      const entry = await onlyEntryOf(rid);
      expect(entry, a.category).toMatchObject({
        path: "writ/approvals",
        decision: "deny",
        error: a.category,
      });
    }
    const rejected = await gw.request("POST", `/v1/approvals/${id}/reject`, {
      token: carol,
      body: { reason: "  not now  " },
    });
    expect(rejected.status, rejected.text).toBe(200);
    expect(JSON.stringify(rejected.json)).toContain('"reason":"not now"');
    const rid = randomUUID();
    const late = await gw.request("POST", `/v1/approvals/${id}/approve`, {
      token: carol,
      body: {},
      requestId: rid,
    });
    expect(errorOf(late, 409).category).toBe("conflict");
    expect(await onlyEntryOf(rid)).toMatchObject({
      path: "writ/approvals",
      error: "conflict",
      approval_id: id,
    });
  });
});

describe("HTTP refusals are on the record", () => {
  it("logs 401 and 403 on resources, decisions and approvals", async () => {
    const routes = ["/v1/resources/workspace/ws-demo", "/v1/decisions", "/v1/approvals"];
    await new Promise((resolve) => setTimeout(resolve, 400)); // earlier windows of this source close
    for (const route of routes) {
      const rid = randomUUID();
      errorOf(await gw.request("GET", route, { token: "not-a-token", requestId: rid }), 401);
      expect(await onlyEntryOf(rid), route).toMatchObject({
        path: "writ/http",
        error: "unauthenticated",
        subject: null,
      });
    }
    for (const route of routes.slice(0, 2)) {
      const rid = randomUUID();
      errorOf(await gw.request("GET", route, { token: alice, requestId: rid }), 403);
      expect(await onlyEntryOf(rid), route).toMatchObject({
        path: "writ/http",
        decision: "deny",
        error: "forbidden",
        subject: "alice",
      });
    }
  });

  it("logs a refusal the pipeline logged once, and loses none when two requests share a request id", async () => {
    // The pipeline logs a malformed proposal itself; the HTTP layer must not log its 400 again.
    const malformed = { format: "canonical", payload: { tool: 42 } };
    const rid = randomUUID();
    errorOf(
      await gw.request("POST", "/v1/proposals", { token: alice, body: malformed, requestId: rid }),
      400,
    );
    const logged = await onlyEntryOf(rid);
    expect(logged).toMatchObject({ error: "invalid_argument" });
    expect(logged.path).not.toBe("writ/http");
    // The same id on requests in flight together: whichever refusal each logged, none is lost.
    const shared = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        i % 2 === 0
          ? gw.request("POST", "/v1/proposals", { token: alice, body: malformed, requestId: shared })
          : gw.request("GET", "/v1/decisions", { token: alice, requestId: shared }),
      ),
    );
    for (const [i, answer] of answers.entries()) errorOf(answer, i % 2 === 0 ? 400 : 403);
    const entries = await entriesOf(shared);
    expect(entries.filter((e) => e.error === "forbidden")).toHaveLength(5);
    expect(entries.filter((e) => e.error === "invalid_argument").length).toBeGreaterThanOrEqual(5);
  });

  it("logs a malformed body, a repeated key and a body over the limit", async () => {
    const bodies: Array<{ raw: string; status: number; category: string }> = [
      { raw: "{not json", status: 400, category: "invalid_argument" },
      { raw: '{"grant":"a","grant":"b","tool":"x"}', status: 400, category: "invalid_argument" },
      {
        raw: JSON.stringify({ grant: "x".repeat(70 * 1024), tool: "repo_read" }),
        status: 413,
        category: "payload_too_large",
      },
    ];
    for (const b of bodies) {
      const rid = randomUUID();
      const answer = await gw.request("POST", "/v1/execute", {
        token: alice,
        rawBody: b.raw,
        requestId: rid,
      });
      expect(errorOf(answer, b.status).category).toBe(b.category);
      expect(await onlyEntryOf(rid), b.raw.slice(0, 40)).toMatchObject({ error: b.category });
    }
  });

  it("aggregates 1,000 identical unauthenticated refusals into a few entries whose counts add up", async () => {
    const tag = `flood-${randomUUID()}`;
    const N = 1000;
    for (let i = 0; i < N; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          gw.request("GET", "/v1/decisions", { token: "bad", requestId: `${tag}-${i + j}` }),
        ),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 700)); // the window (300 ms) closes
    const countOf = (e: LogEntry) =>
      z.object({ aggregate: z.object({ count: z.number() }) }).parse(e.input).aggregate.count;
    const flood = (await logEntries(gw, { path: "writ/http" })).filter((e) =>
      e.caller_request_id?.startsWith(tag),
    );
    expect(flood.length).toBeGreaterThan(1);
    expect(flood.length).toBeLessThan(40);
    expect(flood.reduce((sum, e) => sum + countOf(e), 0)).toBe(N);
  });

  it("aggregates a flood of proposals with a bad token the same way, on the API and on /mcp", async () => {
    const tag = `flood-proposals-${randomUUID()}`;
    const N = 300;
    const call = { tool: "repo.read", arguments: { workspace: "ws-demo", path: "README.md" } };
    for (let i = 0; i < N; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          (i + j) % 2 === 0
            ? gw.request("POST", "/v1/proposals", {
                token: "bad",
                requestId: `${tag}-${i + j}`,
                body: { format: "canonical", payload: call },
              })
            : gw.request("POST", "/mcp", {
                token: "bad",
                requestId: `${tag}-${i + j}`,
                headers: { accept: "application/json" },
                body: {
                  jsonrpc: "2.0",
                  id: i + j,
                  method: "tools/call",
                  params: { name: "repo_read", arguments: call.arguments },
                },
              }),
        ),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 700)); // the window (300 ms) closes
    const countOf = (e: LogEntry) =>
      z.object({ aggregate: z.object({ count: z.number() }) }).parse(e.input).aggregate.count;
    const flood = (await logEntries(gw, {})).filter((e) => e.caller_request_id?.startsWith(tag));
    expect(flood.length).toBeGreaterThan(1);
    expect(flood.length).toBeLessThan(40);
    expect(flood.reduce((sum, e) => sum + countOf(e), 0)).toBe(N);
  });
});
