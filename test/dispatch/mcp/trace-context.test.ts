/**
 * Tracing upstream: a call Writ dispatches to an MCP server inside a traced request carries the
 * dispatch span's W3C trace context in the request's `_meta` (`traceparent`, SEP-414's key), so
 * the server's spans join the gateway request's trace. A real gateway exporting to a loopback
 * OTLP receiver, a v2 upstream on loopback that records the `_meta` it receives.
 */
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notesPolicyDir, withNotes } from "../../mcp/notes-fixture.ts";
import { jsonSpans, type OtlpReceiver, startOtlpReceiver } from "../../observability/otlp-receiver.ts";
import { startTestGateway, type TestGateway, waitFor } from "../../support/gateway.ts";
import { lateGrantKeys } from "../../support/late-grant-keys.ts";
import { startV2Upstream, type V2Upstream } from "../../support/mcp-v2-upstream.ts";

const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

let policyDir: string;
let receiver: OtlpReceiver;
let upstream: V2Upstream;
let gw: TestGateway;

/** Starts the gateway with the OTel SDK exporting to `receiver` (it reads OTEL_* at start). */
async function tracedGateway(configure: (document: Record<string, unknown>) => Record<string, unknown>) {
  const env: Record<string, string> = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "50",
    OTEL_METRIC_EXPORT_INTERVAL: "200",
  };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await startTestGateway({ configure });
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

beforeAll(async () => {
  policyDir = await notesPolicyDir();
  receiver = await startOtlpReceiver();
  const { keys, bind } = lateGrantKeys();
  upstream = await startV2Upstream(keys);
  gw = await tracedGateway(withNotes({ transport: "http", url: upstream.url }, policyDir));
  bind(gw.jwksUrl);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await receiver?.close();
  await rm(policyDir, { recursive: true, force: true });
});

describe("a traced call to an upstream MCP server", () => {
  it("sends the dispatch span's traceparent in _meta, in the caller's trace", async () => {
    const answer = await gw.request("POST", "/v1/proposals", {
      token: await gw.token("vera", { roles: ["viewer"] }),
      headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      body: { format: "canonical", execute: true, payload: { tool: "notes.read", arguments: { id: "n1" } } },
    });
    expect(answer.status, answer.text).toBe(200);
    const dispatch = await waitFor("the dispatch span", async () =>
      jsonSpans(receiver.exports).spans.find((s) => s.name === "dispatch"),
    );
    expect(dispatch.traceId).toBe(CALLER_TRACE);
    const calls = upstream.calls.filter((c) => c.tool === "read_note");
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ revision: "2026-07-28", granted: true });
    expect(calls[0]?.meta.traceparent).toBe(`00-${CALLER_TRACE}-${dispatch.spanId}-01`);
    // No tracestate came in, so none goes out.
    expect(calls[0]?.meta).not.toHaveProperty("tracestate");
  });

  it("sends the caller's tracestate on too", async () => {
    const answer = await gw.request("POST", "/v1/proposals", {
      token: await gw.token("vera", { roles: ["viewer"] }),
      headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, tracestate: "writ=t1,other=x" },
      body: { format: "canonical", execute: true, payload: { tool: "notes.read", arguments: { id: "n1" } } },
    });
    expect(answer.status, answer.text).toBe(200);
    const last = upstream.calls.at(-1);
    expect(last?.meta.traceparent).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
    expect(last?.meta.tracestate).toBe("writ=t1,other=x");
  });
});
