/**
 * The HTTP surface end to end: /healthz, /metrics in the Prometheus text format, the body limit,
 * and structured 404s.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { answerOf, canonicalCall, errorOf, expectLogVerifies, README_ARGS, WS } from "./api.ts";
import { metricsText, sample } from "./metrics.ts";

let gw: TestGateway;
let alice: string;

beforeAll(async () => {
  gw = await startTestGateway();
  alice = await gw.token("alice");
});

afterAll(async () => {
  await gw?.close();
});

describe("/healthz", () => {
  it("reports ok and the loaded policy revision", async () => {
    const answer = await gw.request("GET", "/healthz");
    expect(answer.status).toBe(200);
    const health = await gw.health();
    expect(health.status).toBe("ok");
    expect(health.policy_revision).toMatch(/^[0-9a-f]{16}$/);
    expect(health.policy_error).toBeUndefined();
  });
});

describe("/metrics", () => {
  it("counts decisions by outcome and times them in a histogram", async () => {
    const before = await metricsText(gw);
    const payload = {
      calls: [
        canonicalCall("repo.read", README_ARGS),
        canonicalCall("repo.read", README_ARGS),
        canonicalCall("repo.read", { workspace: WS, path: ".env" }),
        canonicalCall("shell", { cmd: "id" }),
      ],
    };
    const results = answerOf(await gw.propose(alice, { format: "canonical", payload }));
    expect(results.map((r) => r.decision)).toEqual(["allow", "allow", "deny", "error"]);

    const text = await metricsText(gw);
    expect(text).toContain("# TYPE writ_decisions_total counter");
    expect(text).toMatch(/^writ_decisions_total\{decision="allow"\} \d+$/m);
    const delta = (series: string) => sample(text, series) - sample(before, series);
    expect(delta('writ_decisions_total{decision="allow"}')).toBe(2);
    expect(delta('writ_decisions_total{decision="deny"}')).toBe(1);
    expect(delta('writ_decisions_total{decision="error"}')).toBe(1);

    expect(text).toContain("# TYPE writ_decision_duration_seconds histogram");
    expect(delta("writ_decision_duration_seconds_count")).toBe(4);
    expect(delta('writ_decision_duration_seconds_bucket{le="+Inf"}')).toBe(4);
    expect(sample(text, "writ_decision_duration_seconds_sum")).toBeGreaterThan(0);
    // Buckets are cumulative.
    const buckets = [...text.matchAll(/^writ_decision_duration_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)].map(
      (m) => Number(m[2]),
    );
    expect(buckets.length).toBeGreaterThan(2);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));

    expect(text).toContain("# TYPE writ_policy_reloads_total counter");
    expect(text).toContain("# TYPE writ_token_cache_total counter");
    expect(text.endsWith("\n")).toBe(true);
  });

  it("a refused token is counted as an error decision", async () => {
    const before = sample(await metricsText(gw), 'writ_decisions_total{decision="error"}');
    errorOf(
      await gw.propose("garbage", { format: "canonical", payload: canonicalCall("repo.read", README_ARGS) }),
      401,
    );
    expect(sample(await metricsText(gw), 'writ_decisions_total{decision="error"}')).toBe(before + 1);
  });
});

describe("the body limit", () => {
  it("a body over the limit is 413 payload_too_large; one at the limit is read", async () => {
    const limit = gw.parts.config.server.body_limit_bytes;
    const body = JSON.stringify({ format: "canonical", payload: canonicalCall("repo.read", README_ARGS) });
    const atLimit = body + " ".repeat(limit - Buffer.byteLength(body));
    expect(Buffer.byteLength(atLimit)).toBe(limit);
    const ok = await gw.request("POST", "/v1/proposals", { token: alice, rawBody: atLimit });
    expect(answerOf(ok).map((r) => r.decision)).toEqual(["allow"]);

    const over = await gw.request("POST", "/v1/proposals", { token: alice, rawBody: `${atLimit} ` });
    const error = errorOf(over, 413);
    expect(error).toMatchObject({ status: "failed", category: "payload_too_large" });
    expect(error.message).toContain(String(limit));
    // The unread rest of the body makes the connection unusable, and the answer says so.
    expect(over.headers.get("connection")).toBe("close");

    // The client's next requests work (they do not land on the socket the server closes).
    for (let i = 0; i < 3; i++) expect((await gw.request("GET", "/healthz")).status).toBe(200);
  });

  it("a streamed (chunked) body over the limit is 413 too", async () => {
    const limit = gw.parts.config.server.body_limit_bytes;
    const chunk = new TextEncoder().encode(" ".repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > limit * 2) controller.close();
        else {
          sent += chunk.byteLength;
          controller.enqueue(chunk);
        }
      },
    });
    const init: RequestInit & { duplex: "half" } = {
      method: "POST",
      headers: { authorization: `Bearer ${alice}`, "content-type": "application/json" },
      body,
      duplex: "half",
    };
    const response = await fetch(`${gw.url}/v1/proposals`, init);
    const json: unknown = await response.json();
    const error = errorOf({ status: response.status, headers: response.headers, json, text: "" }, 413);
    expect(error.category).toBe("payload_too_large");
    expect((await gw.request("GET", "/healthz")).status).toBe(200);
  });

  it("a chunked body over the limit is refused before the rest of it is sent", async () => {
    const limit = gw.parts.config.server.body_limit_bytes;
    let answered = () => {};
    const answer = new Promise<void>((resolve) => {
      answered = resolve;
    });
    let sent = 0;
    // Past the limit the stream waits for the answer: a server that read the whole body first
    // would never answer (the test times out).
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent > limit) {
          await answer;
          controller.close();
          return;
        }
        const chunk = new TextEncoder().encode(" ".repeat(Math.min(16 * 1024, limit + 1 - sent)));
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const response = await chunkedPost("/v1/proposals", body);
    answered();
    expect(response.status).toBe(413);
    expect(sent).toBe(limit + 1);
    const json: unknown = await response.json();
    expect(errorOf({ status: 413, headers: response.headers, json, text: "" }, 413).message).toContain(
      String(limit),
    );
  });

  it("a chunked body within the limit, or of exactly the limit, is read whole", async () => {
    const limit = gw.parts.config.server.body_limit_bytes;
    const body = JSON.stringify({ format: "canonical", payload: canonicalCall("repo.read", README_ARGS) });
    const atLimit = body + " ".repeat(limit - Buffer.byteLength(body));
    for (const text of [body, atLimit]) {
      const response = await chunkedPost("/v1/proposals", chunked(text, 1000));
      const json: unknown = await response.json();
      expect(response.status).toBe(200);
      expect(
        answerOf({ status: 200, headers: response.headers, json, text: "" }).map((r) => r.decision),
      ).toEqual(["allow"]);
    }
    // /mcp reads its body the same way.
    const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const response = await chunkedPost("/mcp", chunked(list, 7), { accept: "application/json" });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"tools"');
  });
});

/** `text` as a stream of `size`-byte chunks (sent with Transfer-Encoding: chunked). */
function chunked(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.byteLength) controller.close();
      else controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

/** A POST of a streamed body (no Content-Length) as alice. */
function chunkedPost(
  route: string,
  body: ReadableStream<Uint8Array>,
  headers: Record<string, string> = {},
): Promise<Response> {
  const init: RequestInit & { duplex: "half" } = {
    method: "POST",
    headers: { authorization: `Bearer ${alice}`, "content-type": "application/json", ...headers },
    body,
    duplex: "half",
  };
  return fetch(`${gw.url}${route}`, init);
}

describe("unknown routes", () => {
  it("are a structured 404", async () => {
    for (const [method, route] of [
      ["GET", "/v1/nothing-here"],
      ["POST", "/v2/proposals"],
      ["DELETE", "/v1/decisions"],
    ] as const) {
      const error = errorOf(await gw.request(method, route, { token: alice }), 404);
      expect(error).toMatchObject({ status: "failed", category: "not_found", retryable: false });
      expect(error.message).toBe(`no route ${method} ${route}`);
    }
  });
});

it("the decision log verifies", async () => {
  await expectLogVerifies(gw);
});
