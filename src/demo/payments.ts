/**
 * A small, real HTTP payments service for the demo and the dispatch tests: a tool backend that
 * Writ dispatches to over HTTP. Every route needs both
 * - the service's own bearer credential (`Authorization: Bearer <token>`), which the gateway
 *   attaches from `credentials_ref: payments` and which the model and the caller never see, and
 * - a grant for exactly the arguments in the body (`X-Writ-Grant`), verified with `requireGrant`
 *   against the gateway's JWKS; the grant's `max_value` condition bounds the draft's amount.
 *
 * Routes:
 * - `POST /drafts` (`create_payment_draft`, reversible): `{account, amount, currency, memo?}` →
 *   `{draft_id, status: "draft", …}`;
 * - `POST /payments/:draft/commit` (`commit_payment`, committing): `{draft}` → the committed
 *   payment; a draft commits once (a second commit is 409).
 */
import { randomUUID, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { z } from "zod";
import type { ToolContractInput } from "../contracts/schema.ts";
import { WritError } from "../core/errors.ts";
import { type GrantEnv, requireGrant } from "../executor/index.ts";

export interface PaymentsServiceOptions {
  /** The gateway's `/.well-known/jwks.json`. */
  jwksUrl: string;
  /** The gateway's grant issuer (`grants.issuer`). */
  issuer: string;
  /** The bearer token this service accepts; the gateway holds it under `credentials.payments`. */
  credentialToken: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Default 127.0.0.1. */
  hostname?: string;
}

export interface PaymentsCalls {
  /** Requests received per route, refused ones included. */
  received: { drafts: number; commits: number };
  /** Requests that passed the credential and grant checks and were handled. */
  accepted: { drafts: number; commits: number };
}

export interface PaymentDraft {
  draft_id: string;
  account: string;
  amount: number;
  currency: string;
  memo?: string;
  status: "draft" | "committed";
  created_by: string;
  committed_at?: string;
  payment_id?: string;
}

export interface PaymentsService {
  /** The service origin, e.g. `http://127.0.0.1:40123`; also the grant audience it accepts. */
  url: string;
  calls(): PaymentsCalls;
  drafts(): PaymentDraft[];
  close(): Promise<void>;
}

export const PAYMENTS_CREDENTIALS_REF = "payments";

const draftArgsSchema = z.strictObject({
  account: z.string().min(1).max(64),
  amount: z.number().positive(),
  currency: z.string().regex(/^[A-Z]{3}$/),
  memo: z.string().max(200).optional(),
});

const commitArgsSchema = z.strictObject({ draft: z.string().min(1) });

/** The two tool contracts this service implies, for the gateway config and the demo. */
export function paymentsContracts(url: string): ToolContractInput[] {
  const base = url.replace(/\/+$/, "");
  return [
    {
      name: "create_payment_draft",
      version: "1",
      description: "Create a payment draft (nothing is paid until it is committed).",
      input_schema: {
        type: "object",
        properties: {
          account: { type: "string", minLength: 1, maxLength: 64, description: "Payee account id" },
          amount: { type: "number", exclusiveMinimum: 0, description: "Amount in major units" },
          currency: { type: "string", pattern: "^[A-Z]{3}$", description: "ISO 4217 code, e.g. EUR" },
          memo: { type: "string", maxLength: 200 },
        },
        required: ["account", "amount", "currency"],
        additionalProperties: false,
      },
      output_schema: {
        type: "object",
        properties: { draft_id: { type: "string" }, status: { const: "draft" } },
        required: ["draft_id", "status"],
      },
      side_effect: "reversible",
      idempotency: "none",
      resource: { type: "payment_account", id: "/account" },
      data_classification: "confidential",
      timeout_ms: 5_000,
      backend: {
        kind: "http",
        method: "POST",
        url: `${base}/drafts`,
        credentials_ref: PAYMENTS_CREDENTIALS_REF,
      },
    },
    {
      name: "commit_payment",
      version: "1",
      description: "Commit a payment draft: the money moves. Cannot be undone.",
      input_schema: {
        type: "object",
        properties: {
          draft: { type: "string", minLength: 1, description: "Draft id from create_payment_draft" },
        },
        required: ["draft"],
        additionalProperties: false,
      },
      output_schema: {
        type: "object",
        properties: { payment_id: { type: "string" }, status: { const: "committed" } },
        required: ["payment_id", "status"],
      },
      side_effect: "committing",
      idempotency: "none",
      resource: { type: "payment_draft", id: "/draft" },
      data_classification: "confidential",
      timeout_ms: 5_000,
      backend: {
        kind: "http",
        method: "POST",
        url: `${base}/payments/{draft}/commit`,
        credentials_ref: PAYMENTS_CREDENTIALS_REF,
      },
    },
  ];
}

export async function startPaymentsService(options: PaymentsServiceOptions): Promise<PaymentsService> {
  // The grants' audience is the service's own URL, known once it listens: until the app is
  // built, requests get a 503.
  let app: Hono<GrantEnv> | undefined;
  const { server, url } = await listen(options, (request) =>
    app === undefined ? new Response("starting", { status: 503 }) : app.fetch(request),
  );
  const ledger: Ledger = {
    received: { drafts: 0, commits: 0 },
    accepted: { drafts: 0, commits: 0 },
    drafts: new Map(),
  };
  app = paymentsApp(
    ledger,
    { issuer: options.issuer, audience: url, keys: options.jwksUrl },
    options.credentialToken,
  );
  return {
    url,
    calls: () => ({ received: { ...ledger.received }, accepted: { ...ledger.accepted } }),
    drafts: () => [...ledger.drafts.values()].map((draft) => ({ ...draft })),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
      }),
  };
}

/** What the service counts and keeps. */
interface Ledger extends PaymentsCalls {
  drafts: Map<string, PaymentDraft>;
}

async function listen(
  options: PaymentsServiceOptions,
  fetch: (request: Request) => Response | Promise<Response>,
): Promise<{ server: ServerType; url: string }> {
  const hostname = options.hostname ?? "127.0.0.1";
  const server = await new Promise<ServerType>((resolve, reject) => {
    const started = serve({ fetch, port: options.port ?? 0, hostname }, () => resolve(started));
    started.once("error", reject);
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("payments service has no TCP address");
  return { server, url: `http://${hostname}:${(address satisfies AddressInfo).port}` };
}

/** Refuses a request without the service's own bearer credential (compared in constant time). */
function requireCredential(token: string): MiddlewareHandler<GrantEnv> {
  const expected = Buffer.from(`Bearer ${token}`);
  return async (c, next) => {
    const presented = Buffer.from(c.req.header("authorization") ?? "");
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
      c.header("WWW-Authenticate", 'Bearer realm="payments"');
      return fail(
        c,
        401,
        new WritError("unauthenticated", "missing or wrong payments credential", {
          suggestedFix: "the gateway must attach the payments credential (credentials_ref: payments)",
          retryable: false,
        }),
      );
    }
    await next();
  };
}

/** The routes, each counted, then checked for the credential and a grant for its action. */
function paymentsApp(
  ledger: Ledger,
  grantOptions: { issuer: string; audience: string; keys: string },
  credentialToken: string,
): Hono<GrantEnv> {
  const credential = requireCredential(credentialToken);
  const count =
    (route: keyof Ledger["received"]): MiddlewareHandler<GrantEnv> =>
    async (_c, next) => {
      ledger.received[route] += 1;
      await next();
    };
  const hono = new Hono<GrantEnv>();
  hono.post(
    "/drafts",
    count("drafts"),
    credential,
    // The account is in the arguments, which the grant's digest already binds.
    requireGrant({ ...grantOptions, action: { name: "create_payment_draft" } }),
    (c) => createDraft(c, ledger),
  );
  hono.post(
    "/payments/:draft/commit",
    count("commits"),
    credential,
    requireGrant({
      ...grantOptions,
      action: { name: "commit_payment" },
      resource: (c) => ({ type: "payment_draft", id: c.req.param("draft") ?? "" }),
    }),
    (c) => commitDraft(c, ledger),
  );
  return hono;
}

async function createDraft(c: Context<GrantEnv>, ledger: Ledger): Promise<Response> {
  const parsed = draftArgsSchema.safeParse(await c.req.json());
  if (!parsed.success) {
    return fail(
      c,
      400,
      new WritError("invalid_argument", "invalid payment draft", {
        suggestedFix: "send {account, amount, currency, memo?}",
        retryable: false,
      }),
    );
  }
  const grant = c.get("grant");
  const draft: PaymentDraft = {
    draft_id: `drf_${randomUUID()}`,
    ...parsed.data,
    status: "draft",
    created_by: grant.sub,
  };
  ledger.drafts.set(draft.draft_id, draft);
  ledger.accepted.drafts += 1;
  return c.json(draft, 201);
}

async function commitDraft(c: Context<GrantEnv>, ledger: Ledger): Promise<Response> {
  const id = c.req.param("draft") ?? "";
  const parsed = commitArgsSchema.safeParse(await c.req.json());
  if (!parsed.success || parsed.data.draft !== id) {
    return fail(
      c,
      400,
      new WritError("invalid_argument", "the body's draft must match the URL", {
        suggestedFix: "send {draft} with the draft id in the URL",
        retryable: false,
      }),
    );
  }
  const draft = ledger.drafts.get(id);
  if (draft === undefined) {
    return fail(
      c,
      404,
      new WritError("not_found", `no payment draft ${id}`, {
        suggestedFix: "create the draft first with create_payment_draft",
        retryable: false,
      }),
    );
  }
  if (draft.status === "committed") {
    return fail(
      c,
      409,
      new WritError("conflict", `payment draft ${id} is already committed`, {
        suggestedFix: "a draft commits once; create a new draft for another payment",
        retryable: false,
      }),
    );
  }
  draft.status = "committed";
  draft.committed_at = new Date().toISOString();
  draft.payment_id = `pay_${randomUUID()}`;
  ledger.accepted.commits += 1;
  return c.json({ ...draft }, 200);
}

function fail(c: Context<GrantEnv>, status: 400 | 401 | 404 | 409, error: WritError): Response {
  return c.json(error.toJSON(), status);
}
