import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ToolContract, type ToolContractInput, toolContractSchema } from "../../src/contracts/schema.ts";
import { WritError } from "../../src/core/errors.ts";
import { CredentialResolver, dispatchHttp } from "../../src/dispatch/index.ts";

const SECRET = "tok_super_secret_value_42";
const credentials = new CredentialResolver(
  { payments: { from: "env", env: "PAYMENTS_TOKEN" } },
  { env: { PAYMENTS_TOKEN: SECRET } },
);

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}
let seen: Seen[] = [];
let handler: (req: Seen, res: ServerResponse) => void = (_req, res) => res.end();
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const entry = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      seen.push(entry);
      handler(entry, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen = [];
});

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function contract(
  overrides: Partial<ToolContractInput> & { backend: ToolContractInput["backend"] },
): ToolContract {
  return toolContractSchema.parse({
    name: "payments.test",
    version: "1",
    description: "test tool",
    input_schema: { type: "object" },
    side_effect: "committing",
    idempotency: "none",
    ...overrides,
  });
}

async function failure(promise: Promise<unknown>): Promise<WritError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(WritError);
    return error as WritError;
  }
  throw new Error("expected a failure");
}

const noSleep = async () => {};

describe("dispatchHttp", () => {
  it("fills URL templates, sends JSON args, the grant, request id, idempotency key and credentials", async () => {
    handler = (_req, res) => json(res, 200, { ok: true });
    const result = await dispatchHttp({
      contract: contract({
        backend: {
          kind: "http",
          method: "POST",
          url: `${base}/payments/{draft}/commit`,
          headers: { "x-static": "yes" },
          credentials_ref: "payments",
        },
      }),
      args: { draft: "d 1/ä", note: "hi" },
      grant: "grant.jwt.value",
      requestId: "req-1",
      idempotencyKey: "idem-1",
      credentials,
    });
    expect(result.output).toEqual({ ok: true });
    expect(result.status).toBe(200);
    expect(result.attempts).toBe(1);
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
    expect(seen).toHaveLength(1);
    const request = seen[0]!;
    expect(request.url).toBe(`/payments/${encodeURIComponent("d 1/ä")}/commit`);
    expect(JSON.parse(request.body)).toEqual({ draft: "d 1/ä", note: "hi" });
    expect(request.headers["x-writ-grant"]).toBe("grant.jwt.value");
    expect(request.headers["x-request-id"]).toBe("req-1");
    expect(request.headers["idempotency-key"]).toBe("idem-1");
    expect(request.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(request.headers["x-static"]).toBe("yes");
    expect(request.headers["content-type"]).toBe("application/json");
  });

  it("sends GET arguments as query parameters without a body", async () => {
    handler = (_req, res) => json(res, 200, { items: [] });
    await dispatchHttp({
      contract: contract({
        side_effect: "none",
        idempotency: "natural",
        backend: { kind: "http", method: "GET", url: `${base}/accounts/{account}/payments` },
      }),
      args: { account: 42, limit: 5, status: ["a", "b"] },
      grant: "g",
      requestId: "r",
    });
    const request = seen[0]!;
    expect(request.method).toBe("GET");
    expect(request.body).toBe("");
    const url = new URL(request.url, base);
    expect(url.pathname).toBe("/accounts/42/payments");
    expect(url.searchParams.get("limit")).toBe("5");
    expect(url.searchParams.getAll("status")).toEqual(["a", "b"]);
    expect(url.searchParams.has("account")).toBe(false);
  });

  it("never echoes the credential in an error, even when the backend does", async () => {
    handler = (req, res) => json(res, 401, { message: `bad credential ${req.headers.authorization}` });
    const error = await failure(
      dispatchHttp({
        contract: contract({
          backend: { kind: "http", method: "POST", url: `${base}/x`, credentials_ref: "payments" },
        }),
        args: {},
        grant: "g",
        requestId: "r",
        credentials,
      }),
    );
    expect(error.category).toBe("policy_denied");
    expect(error.effectCommitted).toBe(false);
    expect(JSON.stringify(error.toJSON())).not.toContain(SECRET);
    expect(error.message).toContain("[redacted]");
  });

  it("times out a non-idempotent committing call once, with an unknown effect and no retry", async () => {
    handler = () => {}; // never answers
    const error = await failure(
      dispatchHttp({
        contract: contract({
          timeout_ms: 150,
          idempotency: "keyed",
          retry: { attempts: 3, backoff_ms: 0 },
          backend: { kind: "http", method: "POST", url: `${base}/commit` },
        }),
        args: { amount: 1 },
        grant: "g",
        requestId: "r",
        // keyed without a key: not idempotent for this call
      }),
    );
    expect(error.category).toBe("timeout");
    expect(error.effectCommitted).toBe("unknown");
    expect(error.retryable).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toHaveLength(1);
  });

  it("retries a natural idempotent GET on 503 and then succeeds", async () => {
    let count = 0;
    handler = (_req, res) => {
      count += 1;
      if (count < 3) json(res, 503, { message: "busy" });
      else json(res, 200, { balance: 10 });
    };
    const result = await dispatchHttp({
      contract: contract({
        side_effect: "none",
        idempotency: "natural",
        retry: { attempts: 3, backoff_ms: 5 },
        backend: { kind: "http", method: "GET", url: `${base}/balance` },
      }),
      args: {},
      grant: "g",
      requestId: "r",
    });
    expect(result).toMatchObject({ output: { balance: 10 }, status: 200, attempts: 3 });
    expect(seen).toHaveLength(3);
  });

  it("gives up after the configured attempts with backend_unavailable", async () => {
    handler = (_req, res) => json(res, 503, { message: "busy" });
    const get = await failure(
      dispatchHttp({
        contract: contract({
          side_effect: "none",
          idempotency: "natural",
          retry: { attempts: 2, backoff_ms: 0 },
          backend: { kind: "http", method: "GET", url: `${base}/balance` },
        }),
        args: {},
        grant: "g",
        requestId: "r",
        sleep: noSleep,
      }),
    );
    expect(get.category).toBe("backend_unavailable");
    expect(get.effectCommitted).toBe(false);
    expect(seen).toHaveLength(2);

    seen = [];
    const post = await failure(
      dispatchHttp({
        contract: contract({ backend: { kind: "http", method: "POST", url: `${base}/commit` } }),
        args: {},
        grant: "g",
        requestId: "r",
      }),
    );
    expect(post.category).toBe("backend_unavailable");
    expect(post.effectCommitted).toBe("unknown");
    expect(post.retryable).toBe(false);
    expect(seen).toHaveLength(1);
  });

  it.each([
    [400, "invalid_argument"],
    [401, "policy_denied"],
    [403, "policy_denied"],
    [404, "not_found"],
    [409, "conflict"],
  ] as const)("maps %i to %s with effect_committed false", async (status, category) => {
    handler = (_req, res) => json(res, status, { message: "nope" });
    const error = await failure(
      dispatchHttp({
        contract: contract({ backend: { kind: "http", method: "POST", url: `${base}/x` } }),
        args: {},
        grant: "g",
        requestId: "r",
      }),
    );
    expect(error.category).toBe(category);
    expect(error.effectCommitted).toBe(false);
    expect(error.message).toContain("nope");
  });

  it("treats a non-JSON answer as backend_unavailable", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>oops</html>");
    };
    const error = await failure(
      dispatchHttp({
        contract: contract({ backend: { kind: "http", method: "POST", url: `${base}/x` } }),
        args: {},
        grant: "g",
        requestId: "r",
      }),
    );
    expect(error.category).toBe("backend_unavailable");
  });

  it("reports a refused connection as backend_unavailable with no effect", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await failure(
      dispatchHttp({
        contract: contract({ backend: { kind: "http", method: "POST", url: `http://127.0.0.1:${port}/x` } }),
        args: {},
        grant: "g",
        requestId: "r",
      }),
    );
    expect(error.category).toBe("backend_unavailable");
    expect(error.effectCommitted).toBe(false);
    expect(error.message).toContain("ECONNREFUSED");
  });

  it("refuses a template argument that is missing", async () => {
    const error = await failure(
      dispatchHttp({
        contract: contract({ backend: { kind: "http", method: "POST", url: `${base}/p/{draft}` } }),
        args: {},
        grant: "g",
        requestId: "r",
      }),
    );
    expect(error.category).toBe("invalid_argument");
    expect(seen).toHaveLength(0);
  });
});
