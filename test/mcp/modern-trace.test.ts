/**
 * A 2026-07-28 request's `_meta` `traceparent` (and `tracestate`) is the parent of Writ's spans
 * for it: a real gateway exporting to a loopback OTLP receiver (test/observability/), a raw
 * modern `tools/call` carrying the caller's trace context in its `_meta` and none in its headers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WS } from "../e2e/api.ts";
import { jsonSpans, type OtlpReceiver, startOtlpReceiver } from "../observability/otlp-receiver.ts";
import { startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
import { postModern } from "../support/mcp-v2-client.ts";

const CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN = "b7ad6b7169203331";

let receiver: OtlpReceiver;
let gw: TestGateway;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const env: Record<string, string> = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "50",
  };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    gw = await startTestGateway();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await receiver?.close();
});

describe("a 2026-07-28 request's trace context", () => {
  it("parents Writ's spans for the request: the request's server span, then its stages", async () => {
    const answer = await postModern(gw.url, await gw.token("alice"), {
      method: "tools/call",
      params: { name: "repo_read", arguments: { workspace: WS, path: "README.md" } },
      meta: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, tracestate: "vendor=1" },
    });
    expect(answer.status, await answer.text()).toBe(200);
    const spans = () => jsonSpans(receiver.exports).spans;
    const request = await waitFor("the request's span under the caller's trace", async () =>
      spans().find((s) => s.traceId === CALLER_TRACE && s.name === "mcp tools/call"),
    );
    expect(request.parentSpanId).toBe(CALLER_SPAN);
    expect(request.kind).toBe(2);
    const stages = await waitFor("its stages", async () => {
      const children = spans().filter((s) => s.parentSpanId === request.spanId);
      return children.some((s) => s.name === "result") ? children : undefined;
    });
    for (const name of ["decide", "dispatch", "result"]) {
      const stage = stages.find((s) => s.name === name);
      expect(stage?.traceId, name).toBe(CALLER_TRACE);
    }
    expect(stages.find((s) => s.name === "dispatch")?.attributes["writ.action"]).toBe("repo.read");
    // The HTTP request's span, which carried no traceparent header, is not the stages' parent.
    const http = spans().find((s) => s.name === "POST /mcp" && s.traceId !== CALLER_TRACE);
    expect(http).toBeDefined();
  });
});
