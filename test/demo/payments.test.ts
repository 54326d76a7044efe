import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolContractSchema } from "../../src/contracts/schema.ts";
import { jsonDigest } from "../../src/core/digest.ts";
import type { Condition } from "../../src/core/types.ts";
import { type PaymentsService, paymentsContracts, startPaymentsService } from "../../src/demo/payments.ts";
import { CredentialResolver, dispatchHttp } from "../../src/dispatch/index.ts";
import { GrantSigner } from "../../src/grants/index.ts";

const TOKEN = "pay_test_credential_0123456789";
let signer: GrantSigner;
let jwksServer: ServerType;
let payments: PaymentsService;

beforeAll(async () => {
  signer = await GrantSigner.create({ issuer: "writ" });
  const app = new Hono();
  app.get("/.well-known/jwks.json", (c) => c.json(signer.jwks()));
  jwksServer = await new Promise<ServerType>((resolve) => {
    const started = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(started));
  });
  const port = (jwksServer.address() as AddressInfo).port;
  payments = await startPaymentsService({
    jwksUrl: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    issuer: "writ",
    credentialToken: TOKEN,
  });
});
afterAll(async () => {
  await payments.close();
  await new Promise<void>((resolve) => jwksServer.close(() => resolve()));
});

async function grantFor(
  name: "create_payment_draft" | "commit_payment",
  args: Record<string, unknown>,
  cnd: Condition[] = [],
): Promise<string> {
  const issued = await signer.issue({
    aud: payments.url,
    sub: "alice",
    tnt: "acme",
    act: { name, version: "1" },
    res:
      name === "commit_payment"
        ? { type: "payment_draft", id: String(args.draft) }
        : { type: "payment_account", id: String(args.account) },
    args: jsonDigest(args),
    cnd,
    dec: "dec-1",
    pol: "pol-1",
    max: 1,
  });
  return issued.token;
}

async function post(
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${payments.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const draftArgs = { account: "acct-7", amount: 120, currency: "EUR", memo: "invoice 7" };

describe("payments service", () => {
  it("creates a draft with a valid grant and the credential", async () => {
    const before = payments.calls();
    const grant = await grantFor("create_payment_draft", draftArgs);
    const answer = await post("/drafts", draftArgs, {
      authorization: `Bearer ${TOKEN}`,
      "x-writ-grant": grant,
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      status: "draft",
      account: "acct-7",
      amount: 120,
      created_by: "alice",
    });
    expect(String(answer.body.draft_id)).toMatch(/^drf_/);
    expect(payments.calls().accepted.drafts).toBe(before.accepted.drafts + 1);
  });

  it("refuses a missing or wrong credential with 401", async () => {
    const grant = await grantFor("create_payment_draft", draftArgs);
    const missing = await post("/drafts", draftArgs, { "x-writ-grant": grant });
    expect(missing.status).toBe(401);
    const wrong = await post("/drafts", draftArgs, { authorization: "Bearer nope", "x-writ-grant": grant });
    expect(wrong.status).toBe(401);
    expect(JSON.stringify(wrong.body)).not.toContain(TOKEN);
  });

  it("refuses a missing grant with 401", async () => {
    const answer = await post("/drafts", draftArgs, { authorization: `Bearer ${TOKEN}` });
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ category: "unauthenticated", code: "missing_grant" });
  });

  it("refuses a draft over the grant's max_value with 403", async () => {
    const args = { account: "acct-7", amount: 5000, currency: "EUR" };
    const grant = await grantFor("create_payment_draft", args, [
      { type: "max_value", path: "/amount", max: 1000 },
    ]);
    const before = payments.calls().accepted.drafts;
    const answer = await post("/drafts", args, { authorization: `Bearer ${TOKEN}`, "x-writ-grant": grant });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ category: "policy_denied", code: "args_mismatch" });
    expect(payments.calls().accepted.drafts).toBe(before);

    const within = { account: "acct-7", amount: 999, currency: "EUR" };
    const ok = await post("/drafts", within, {
      authorization: `Bearer ${TOKEN}`,
      "x-writ-grant": await grantFor("create_payment_draft", within, [
        { type: "max_value", path: "/amount", max: 1000 },
      ]),
    });
    expect(ok.status).toBe(201);
  });

  it("commits a draft once, dispatched through dispatchHttp with credentials_ref", async () => {
    const [draftContract, commitContract] = paymentsContracts(payments.url).map((c) =>
      toolContractSchema.parse(c),
    );
    const credentials = new CredentialResolver(
      { payments: { from: "env", env: "PAYMENTS_TOKEN" } },
      { env: { PAYMENTS_TOKEN: TOKEN } },
    );
    const args = { account: "acct-9", amount: 50, currency: "USD" };
    const created = await dispatchHttp({
      contract: draftContract!,
      args,
      grant: await grantFor("create_payment_draft", args),
      requestId: "req-d",
      credentials,
    });
    expect(created.status).toBe(201);
    const draft = String((created.output as { draft_id: string }).draft_id);

    const commitArgs = { draft };
    const committed = await dispatchHttp({
      contract: commitContract!,
      args: commitArgs,
      grant: await grantFor("commit_payment", commitArgs),
      requestId: "req-c",
      credentials,
    });
    expect(committed.output).toMatchObject({ status: "committed", draft_id: draft });
    expect(String((committed.output as { payment_id: string }).payment_id)).toMatch(/^pay_/);

    const commitsBefore = payments.calls().received.commits;
    const again = await dispatchHttp({
      contract: commitContract!,
      args: commitArgs,
      grant: await grantFor("commit_payment", commitArgs),
      requestId: "req-c2",
      credentials,
    }).catch((error: unknown) => error);
    expect(again).toMatchObject({ category: "conflict", effectCommitted: false });
    expect(payments.calls().received.commits).toBe(commitsBefore + 1);
    expect(payments.drafts().filter((d) => d.draft_id === draft && d.status === "committed")).toHaveLength(1);
  });

  it("refuses a replayed grant", async () => {
    const args = { account: "acct-1", amount: 1, currency: "EUR" };
    const grant = await grantFor("create_payment_draft", args);
    const headers = { authorization: `Bearer ${TOKEN}`, "x-writ-grant": grant };
    expect((await post("/drafts", args, headers)).status).toBe(201);
    const replay = await post("/drafts", args, headers);
    expect(replay.status).toBe(403);
    expect(replay.body).toMatchObject({ code: "replayed" });
  });
});
