/**
 * Writ in front of a real HTTP backend: the payments demo service, reached with a grant and a
 * credential Writ attaches at dispatch. Drafts are capped by a `max_value` condition for ordinary
 * users; committing a payment needs a treasurer's approval.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer as createHttpServer, type Server } from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { parseConfig } from "../../src/config/index.ts";
import { type PaymentsService, paymentsContracts, startPaymentsService } from "../../src/demo/payments.ts";
import { DevIssuer } from "../../src/identity/index.ts";
import { type RunningGateway, startGateway } from "../../src/server.ts";
import { defaultConfigDocument } from "../support/config-file.ts";
import { repoRoot } from "../support/paths.ts";
import { freePort } from "../support/ports.ts";

const SECRET = "pay-secret-3f9a1c";
const ENV = "WRIT_E2E_PAYMENTS_TOKEN";

const outcomeSchema = z.object({
  decision: z.string(),
  reasons: z.array(z.object({ code: z.string() })),
  approval: z.object({ id: z.string() }).optional(),
  error: z
    .object({ category: z.string(), effect_committed: z.union([z.boolean(), z.literal("unknown")]) })
    .optional(),
  result: z.object({ structured_content: z.record(z.string(), z.unknown()) }).optional(),
});
const answerSchema = z.object({ results: z.array(outcomeSchema) });

describe("an HTTP backend behind Writ", () => {
  let tmp: string;
  let payments: PaymentsService;
  let running: RunningGateway;
  let dev: DevIssuer;
  const seen: string[] = [];

  const call = async (route: string, token: string, body: unknown) => {
    const response = await fetch(`${running.url}${route}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    seen.push(text);
    const parsed: unknown = JSON.parse(text);
    return { status: response.status, body: parsed };
  };
  const propose = async (token: string, tool: string, args: Record<string, unknown>) => {
    const answer = await call("/v1/proposals", token, {
      format: "canonical",
      payload: { tool, arguments: args },
      execute: true,
    });
    return answerSchema.parse(answer.body).results[0]!;
  };

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "writ-payments-"));
    const port = await freePort();
    payments = await startPaymentsService({
      jwksUrl: `http://127.0.0.1:${port}/.well-known/jwks.json`,
      issuer: "writ",
      credentialToken: SECRET,
    });
    process.env[ENV] = SECRET;
    const document = await defaultConfigDocument();
    const config = parseConfig(
      {
        ...document,
        server: { host: "127.0.0.1", port, executor_id: "writ" },
        store: { sqlite: path.join(tmp, "writ.db") },
        policy: { dir: path.join(repoRoot, "policies"), watch: false },
        identity: { issuers: [], dev_issuer: { enabled: true, key_file: path.join(tmp, "dev.json") } },
        grants: { issuer: "writ", key_file: path.join(tmp, "grants.json") },
        // The embedded default's payments tools point at port 8081; point them at this service.
        tools: [
          ...z
            .array(z.looseObject({ backend: z.looseObject({ kind: z.string() }) }))
            .parse(document.tools)
            .filter((t) => t.backend.kind !== "http"),
          ...paymentsContracts(payments.url),
        ],
        credentials: { payments: { from: "env", env: ENV } },
      },
      tmp,
      "payments e2e configuration",
    );
    running = await startGateway(config);
    dev = await DevIssuer.create({ keyFile: path.join(tmp, "dev.json") });
  });

  afterAll(async () => {
    await running?.close();
    await payments?.close();
    delete process.env[ENV];
    await rm(tmp, { recursive: true, force: true });
  });

  it("runs an allowed draft on the backend with the grant and the credential, under the policy's cap", async () => {
    const alice = await dev.mint({ sub: "alice", tenant: "demo" });
    const ok = await propose(alice, "create_payment_draft", {
      account: "acct-alice",
      amount: 40,
      currency: "EUR",
    });
    expect(ok.decision).toBe("allow_with_conditions");
    expect(ok.reasons.map((r) => r.code)).toEqual(["amount_capped"]);
    expect(ok.error).toBeUndefined();
    expect(JSON.stringify(ok.result?.structured_content)).toContain("drf_");
    expect(payments.calls().accepted.drafts).toBe(1);

    const over = await propose(alice, "create_payment_draft", {
      account: "acct-alice",
      amount: 500,
      currency: "EUR",
    });
    expect(over.decision).toBe("allow_with_conditions");
    expect(over.error?.category).toBe("policy_denied");
    expect(over.error?.effect_committed).toBe(false);
    // The condition was enforced by Writ before dispatch: the backend never saw the call.
    expect(payments.calls().received.drafts).toBe(1);
  });

  it("a token without the scopes committing needs is challenged to step up (403, insufficient_scope)", async () => {
    const partial = await dev.mint({ sub: "alice", tenant: "demo", scopes: ["payments:write"] });
    const [draft] = payments.drafts();
    const response = await fetch(`${running.url}/v1/proposals`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${partial}` },
      body: JSON.stringify({
        format: "canonical",
        payload: { tool: "commit_payment", arguments: { draft: draft!.draft_id } },
        execute: true,
      }),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toBe(
      'Bearer realm="writ", scope="payments:write payments:commit", error="insufficient_scope", error_description="commit_payment needs a token with the scopes payments:write payments:commit"',
    );
    const body = z
      .object({ category: z.string(), required_scopes: z.array(z.string()), results: z.array(outcomeSchema) })
      .parse(await response.json());
    expect(body).toMatchObject({
      category: "policy_denied",
      required_scopes: ["payments:write", "payments:commit"],
    });
    expect(body.results[0]?.reasons.map((r) => r.code)).toEqual(["insufficient_scope"]);
    expect(payments.calls().received.commits).toBe(0);
  });

  it("commits a payment only after a treasurer approves, and never shows the credential", async () => {
    // The sample policy commits payments for a token that carries both payment scopes.
    const alice = await dev.mint({
      sub: "alice",
      tenant: "demo",
      scopes: ["payments:write", "payments:commit"],
    });
    const tess = await dev.mint({ sub: "tess", tenant: "demo", roles: ["treasurer"] });
    const [draft] = payments.drafts();
    const asked = await propose(alice, "commit_payment", { draft: draft!.draft_id });
    expect(asked.decision).toBe("require_approval");
    expect(payments.calls().received.commits).toBe(0);

    const approved = await call(`/v1/approvals/${asked.approval!.id}/approve`, tess, {
      reason: "invoice checked",
    });
    expect(approved.status).toBe(200);
    // alice collects the grant from the approval (minted now).
    const collected = await fetch(`${running.url}/v1/approvals/${asked.approval!.id}`, {
      headers: { authorization: `Bearer ${alice}` },
    });
    const collectedText = await collected.text();
    seen.push(collectedText);
    const grant = z.object({ grant: z.object({ token: z.string() }) }).parse(JSON.parse(collectedText))
      .grant.token;

    const executed = await call("/v1/execute", alice, {
      grant,
      tool: "commit_payment",
      arguments: { draft: draft!.draft_id },
    });
    expect(executed.status).toBe(200);
    expect(payments.calls().accepted.commits).toBe(1);

    const log: string[] = [];
    for await (const line of running.gateway.log.exportNdjson()) log.push(line);
    expect(log.length).toBeGreaterThan(0);
    expect(log.join("")).not.toContain(SECRET);
    expect(seen.join("")).not.toContain(SECRET);
    expect((await running.gateway.log.verify()).ok).toBe(true);
  });
});

describe("a backend that does not answer in time", () => {
  let tmp: string;
  let running: RunningGateway;
  let dev: DevIssuer;
  let hanging: Server;
  let received = 0;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "writ-timeout-"));
    hanging = createHttpServer(() => {
      received++; // never answers
    });
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    const address = hanging.address();
    const backendPort = typeof address === "object" && address ? address.port : 0;
    process.env[ENV] = SECRET;
    const document = await defaultConfigDocument();
    const slow = paymentsContracts(`http://127.0.0.1:${backendPort}`).map((c) => ({ ...c, timeout_ms: 300 }));
    const config = parseConfig(
      {
        ...document,
        server: { host: "127.0.0.1", port: 0, executor_id: "writ" },
        store: { sqlite: path.join(tmp, "writ.db") },
        policy: { dir: path.join(repoRoot, "policies"), watch: false },
        identity: { issuers: [], dev_issuer: { enabled: true, key_file: path.join(tmp, "dev.json") } },
        grants: { issuer: "writ", key_file: path.join(tmp, "grants.json") },
        tools: [
          ...z
            .array(z.looseObject({ backend: z.looseObject({ kind: z.string() }) }))
            .parse(document.tools)
            .filter((t) => t.backend.kind !== "http"),
          ...slow,
        ],
        credentials: { payments: { from: "env", env: ENV } },
      },
      tmp,
      "timeout e2e configuration",
    );
    running = await startGateway(config);
    dev = await DevIssuer.create({ keyFile: path.join(tmp, "dev.json") });
  });

  afterAll(async () => {
    await running?.close();
    hanging?.closeAllConnections();
    await new Promise<void>((resolve) => (hanging ? hanging.close(() => resolve()) : resolve()));
    delete process.env[ENV];
    await rm(tmp, { recursive: true, force: true });
  });

  it("reports a timeout with effect_committed unknown and does not retry a call that is not idempotent", async () => {
    const alice = await dev.mint({ sub: "alice", tenant: "demo" });
    const response = await fetch(`${running.url}/v1/proposals`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${alice}` },
      body: JSON.stringify({
        format: "canonical",
        payload: {
          tool: "create_payment_draft",
          arguments: { account: "acct-alice", amount: 10, currency: "EUR" },
        },
        execute: true,
      }),
    });
    const text = await response.text();
    const [outcome] = answerSchema.parse(JSON.parse(text)).results;
    expect(outcome?.error?.category).toBe("timeout");
    expect(outcome?.error?.effect_committed).toBe("unknown");
    expect(received).toBe(1);
    expect(text).not.toContain(SECRET);
  });
});
