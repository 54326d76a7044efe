/**
 * OpenTelemetry export (issue 17) from a real gateway to a loopback OTLP receiver: a server span
 * per request under the caller's traceparent, one child span per stage (per call for stages
 * 4–10) with the decision's attributes and none of its arguments, metrics with /metrics' names
 * and labels, both OTLP encodings, the last spans flushed at shutdown, and nothing at all when
 * the OTEL_* environment does not ask for it.
 */
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { answerOf, canonicalCall, pendingApproval, WS } from "../e2e/api.ts";
import { type StartOptions, startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
import { repoRoot } from "../support/paths.ts";
import {
  jsonMetricPoints,
  jsonSpans,
  type OtlpExport,
  type OtlpReceiver,
  protobufSpans,
  type ReceivedSpan,
  startOtlpReceiver,
} from "./otlp-receiver.ts";

/** An argument value that must never leave in telemetry. */
const MARKER = "otel-marker-5f1c9e";
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const REQUEST_STAGES = ["intake", "normalize", "identity"];
const CALL_STAGES = ["resource", "decide", "grant", "log", "dispatch", "result"];

/** Starts a test gateway with these OTEL_* variables set while it starts (the SDK reads them then). */
async function gatewayWith(env: Record<string, string>, options: StartOptions = {}): Promise<TestGateway> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await startTestGateway(options);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

const otlpEnv = (receiver: OtlpReceiver, protocol: string): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_BSP_SCHEDULE_DELAY: "50",
  OTEL_METRIC_EXPORT_INTERVAL: "200",
  OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test",
});

/** Two reads of the demo workspace, executed, under the caller's trace: the proposal's answer. */
async function tracedProposal(gw: TestGateway, token: string) {
  const answer = await gw.request("POST", "/v1/proposals", {
    token,
    headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    body: {
      format: "canonical",
      execute: true,
      payload: {
        calls: [
          canonicalCall("repo_read", { workspace: WS, path: "README.md" }, "c1"),
          canonicalCall("repo_search", { workspace: WS, query: MARKER }, "c2"),
        ],
      },
    },
  });
  expect(answer.status, answer.text).toBe(200);
  return answerOf(answer);
}

/**
 * A receiver and a gateway started with `env(receiver)`; `during` runs against them (by default
 * one traced proposal), then the gateway closes (flushing what it batched) and the receiver too:
 * everything the receiver got.
 */
async function exportsOf(
  env: (receiver: OtlpReceiver) => Record<string, string>,
  during: (gw: TestGateway, receiver: OtlpReceiver) => Promise<unknown> = async (gw) =>
    tracedProposal(gw, await gw.token("alice")),
): Promise<OtlpExport[]> {
  const receiver = await startOtlpReceiver();
  try {
    const gw = await gatewayWith(env(receiver));
    try {
      await during(gw, receiver);
    } finally {
      await gw.close();
    }
    return receiver.exports;
  } finally {
    await receiver.close();
  }
}

/** An MCP `tools/call` of repo_read on POST /mcp, from a caller that accepts streams. */
function mcpRead(gw: TestGateway, token: string, requestId: string) {
  return gw.request("POST", "/mcp", {
    token,
    requestId,
    headers: { accept: "application/json, text/event-stream" },
    body: {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "repo_read", arguments: { workspace: WS, path: "README.md" } },
    },
  });
}

function only(spans: ReceivedSpan[], what: string): ReceivedSpan {
  expect(spans, what).toHaveLength(1);
  return spans[0]!;
}

describe("OTLP over http/json", () => {
  let receiver: OtlpReceiver;
  let gw: TestGateway;
  let alice: string;
  const spans = () => jsonSpans(receiver.exports).spans;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    gw = await gatewayWith({
      ...otlpEnv(receiver, "http/json"),
      OTEL_SERVICE_NAME: "writ-under-test",
      OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=k-123",
    });
    alice = await gw.token("alice");
  });
  afterAll(async () => {
    await gw?.close();
    await receiver?.close();
  });

  it("gives a request a server span under the caller's traceparent, and each stage a child span per call", async () => {
    const outcomes = await tracedProposal(gw, alice);
    expect(outcomes.map((o) => o.grant === undefined)).toEqual([false, false]);
    const request = await waitFor("the request's span", async () =>
      spans().find((s) => s.traceId === CALLER_TRACE && s.name === "POST /v1/proposals"),
    );
    expect(request.kind).toBe(2);
    expect(request.parentSpanId).toBe(CALLER_SPAN);
    expect(request.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/v1/proposals",
      "http.response.status_code": 200,
    });
    const children = await waitFor("every stage's span", async () => {
      const c = spans().filter((s) => s.parentSpanId === request.spanId);
      return c.length >= REQUEST_STAGES.length + 2 * (CALL_STAGES.length + 1) ? c : undefined;
    });
    const named = (name: string) => children.filter((s) => s.name === name);
    for (const name of REQUEST_STAGES) only(named(name), name);
    expect(named("identity")[0]?.attributes["writ.tenant"]).toBe("demo");
    const revision = gw.gateway.policy.revision;
    for (const [i, outcome] of outcomes.entries()) {
      for (const name of CALL_STAGES) {
        const ofCall = named(name).filter((s) => s.attributes["writ.decision_id"] === outcome.decision_id);
        // An executed call is logged twice: its decision, then its execution (writ/execute).
        if (name === "log") expect(ofCall, `log of call ${i}`).toHaveLength(2);
        const span = name === "log" ? ofCall[0]! : only(ofCall, `${name} of call ${i}`);
        expect(span.traceId).toBe(CALLER_TRACE);
        expect(span.attributes).toMatchObject({
          "writ.tenant": "demo",
          "writ.action": i === 0 ? "repo.read" : "repo.search",
        });
        // The decision is known from stage 5 on.
        if (name !== "resource") {
          expect(span.attributes).toMatchObject({
            "writ.decision": outcome.decision,
            "writ.policy.revision": revision,
          });
        }
      }
    }
    // Each of the two calls: its stages, and the log span of its execution.
    expect(children).toHaveLength(REQUEST_STAGES.length + 2 * (CALL_STAGES.length + 1));
  });

  it("names the service from OTEL_SERVICE_NAME, adds OTEL_RESOURCE_ATTRIBUTES, sends OTEL_EXPORTER_OTLP_HEADERS", async () => {
    await waitFor("a trace export", async () => (spans().length > 0 ? true : undefined));
    for (const e of receiver.exports) {
      expect(e.headers["x-collector-key"]).toBe("k-123");
      expect(e.contentType).toBe("application/json");
    }
    expect(jsonSpans(receiver.exports).resources[0]).toMatchObject({
      "service.name": "writ-under-test",
      "deployment.environment.name": "test",
    });
  });

  it("never exports argument values, tokens or the subject's claims", async () => {
    await waitFor("the spans of the traced proposal", async () =>
      spans().some((s) => s.name === "result") ? true : undefined,
    );
    for (const e of receiver.exports) {
      const body = e.body.toString("utf8");
      expect(body).not.toContain(MARKER);
      expect(body).not.toContain("README.md");
      expect(body).not.toContain(alice);
      expect(body).not.toContain(alice.split(".")[1]!);
    }
  });

  it("sets the status of a stage that fails, and the approval stage's span when a call waits", async () => {
    const refused = await gw.request("POST", "/v1/proposals", {
      token: "not-a-jwt",
      requestId: "otel-unauthenticated",
      body: {
        format: "canonical",
        payload: canonicalCall("repo_read", { workspace: WS, path: "README.md" }),
      },
    });
    expect(refused.status).toBe(401);
    const request = await waitFor("the refused request's span", async () =>
      spans().find((s) => s.attributes["writ.caller_request_id"] === "otel-unauthenticated"),
    );
    // A 4xx is the caller's error: the server span is not failed; the stage that refused is.
    expect(request.statusCode).toBe(0);
    expect(request.attributes["http.response.status_code"]).toBe(401);
    const identity = await waitFor("the identity span", async () =>
      spans().find((s) => s.parentSpanId === request.spanId && s.name === "identity"),
    );
    expect(identity.statusCode).toBe(2);
    expect(identity.attributes["error.type"]).toBe("unauthenticated");

    await pendingApproval(gw);
    const approval = await waitFor("an approval span", async () =>
      spans().find((s) => s.name === "approval"),
    );
    expect(approval.attributes).toMatchObject({
      "writ.action": "repo.apply_edit",
      "writ.decision": "require_approval",
    });
  });

  it("traces an MCP tools/call like a proposal: one span for POST /mcp, the stages under it", async () => {
    const answer = await mcpRead(gw, alice, "otel-mcp");
    expect(answer.status, answer.text).toBe(200);
    const request = await waitFor("the /mcp span", async () =>
      spans().find((s) => s.attributes["writ.caller_request_id"] === "otel-mcp"),
    );
    expect(request.name).toBe("POST /mcp");
    expect(request.kind).toBe(2);
    const stages = await waitFor("its stages", async () => {
      const c = spans().filter((s) => s.parentSpanId === request.spanId);
      return c.some((s) => s.name === "result") ? c : undefined;
    });
    expect(stages.filter((s) => s.name === "decide")).toHaveLength(1);
    expect(stages.find((s) => s.name === "dispatch")?.attributes["writ.action"]).toBe("repo.read");
  });

  it("exports /metrics' counters and histograms with the same names and labels", async () => {
    const points = await waitFor("the decision counter", async () => {
      const p = jsonMetricPoints(receiver.exports);
      const allowed = p.filter(
        (x) => x.metric === "writ_decisions_total" && x.attributes.decision === "allow",
      );
      return allowed.some((x) => x.value >= 1) ? p : undefined;
    });
    const latest = (metric: string) => points.filter((p) => p.metric === metric).at(-1);
    expect(latest("writ_decision_duration_seconds")?.bounds).toEqual([
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
    ]);
    expect(latest("writ_decision_duration_seconds")?.value).toBeGreaterThanOrEqual(2);
    expect(points.some((p) => p.metric === "writ_policy_reloads_total" && p.attributes.result === "ok")).toBe(
      true,
    );
    expect(points.some((p) => p.metric === "writ_dispatches_total" && p.attributes.result === "ok")).toBe(
      true,
    );
    expect(points.some((p) => p.metric === "writ_token_cache_total" && p.attributes.result === "miss")).toBe(
      true,
    );
  });
});

describe("OTLP over http/protobuf (the default protocol)", () => {
  it("sends protobuf whose spans have the request span as parent", async () => {
    const env = (receiver: OtlpReceiver) => ({
      ...otlpEnv(receiver, ""),
      OTEL_EXPORTER_OTLP_PROTOCOL: "",
      OTEL_METRIC_EXPORT_INTERVAL: "60000",
    });
    await exportsOf(env, async (gw, receiver) => {
      const outcomes = await tracedProposal(gw, await gw.token("alice"));
      const spans = await waitFor("the stage spans", async () => {
        const s = protobufSpans(receiver.exports);
        // The request's span ends after its stages' (once the answer is sent): it may come in a later batch.
        const whole =
          s.filter((x) => x.name === "result").length >= 2 && s.some((x) => x.name === "POST /v1/proposals");
        return whole ? s : undefined;
      });
      for (const e of receiver.exports) {
        expect(e.contentType).toBe("application/x-protobuf");
        expect(e.body.length).toBeGreaterThan(0);
        expect(e.body.includes(MARKER)).toBe(false);
      }
      const request = only(
        spans.filter((s) => s.name === "POST /v1/proposals"),
        "request span",
      );
      expect(request.parentSpanId).toBe(CALLER_SPAN);
      for (const name of [...REQUEST_STAGES, ...CALL_STAGES]) {
        const stage = spans.filter((s) => s.name === name);
        // Two calls, each logged twice when executed (its decision, its execution).
        expect(stage.length, name).toBe(REQUEST_STAGES.includes(name) ? 1 : name === "log" ? 4 : 2);
        for (const s of stage) expect(s.parentSpanId).toBe(request.spanId);
      }
      expect(spans.find((s) => s.name === "grant")?.attributes["writ.decision_id"]).toBe(
        outcomes[0]?.decision_id,
      );
    });
  });
});

describe("HTTP backends", () => {
  const seen: Array<string | undefined> = [];
  let delayMs = 0;
  const backend = createServer((req, res) => {
    const header = req.headers.traceparent;
    seen.push(typeof header === "string" ? header : undefined);
    req.resume();
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ content: "hello" }));
    }, delayMs);
  });
  let receiver: OtlpReceiver;
  let gw: TestGateway;
  const spans = () => jsonSpans(receiver.exports).spans;

  beforeAll(async () => {
    await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve));
    const { port } = z.object({ port: z.number() }).parse(backend.address());
    receiver = await startOtlpReceiver();
    gw = await gatewayWith(otlpEnv(receiver, "http/json"), {
      configure: (document) => ({
        ...document,
        tools: z
          .array(z.record(z.string(), z.unknown()))
          .parse(document.tools)
          .map((t) =>
            t.name === "repo.read"
              ? { ...t, backend: { kind: "http", method: "POST", url: `http://127.0.0.1:${port}/read` } }
              : t,
          ),
      }),
    });
  });
  afterAll(async () => {
    await gw?.close();
    await receiver?.close();
    await new Promise((resolve) => backend.close(resolve));
  });

  it("receive the dispatch span's traceparent", async () => {
    await gw.request("POST", "/v1/proposals", {
      token: await gw.token("alice"),
      headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      body: {
        format: "canonical",
        execute: true,
        payload: canonicalCall("repo_read", { workspace: WS, path: "README.md" }),
      },
    });
    const dispatch = await waitFor("the dispatch span", async () =>
      spans().find((s) => s.name === "dispatch"),
    );
    expect(seen).toEqual([`00-${CALLER_TRACE}-${dispatch.spanId}-01`]);
  });

  it("a slow MCP call answered as a stream: the request's span ends with the stream", async () => {
    delayMs = 1_300; // past src/mcp/lazy-stream.ts's STREAM_AFTER_MS: the answer becomes SSE
    const answer = await mcpRead(gw, await gw.token("alice"), "otel-sse");
    expect(answer.headers.get("content-type")).toContain("text/event-stream");
    const request = await waitFor("the /mcp span", async () =>
      spans().find((s) => s.attributes["writ.caller_request_id"] === "otel-sse"),
    );
    const result = await waitFor("its result stage", async () =>
      spans().find((s) => s.parentSpanId === request.spanId && s.name === "result"),
    );
    expect(request.endNs).toBeGreaterThanOrEqual(result.endNs);
  });
});

describe("an unreachable collector", () => {
  it("changes no answer and is reported once", async () => {
    const closed = await startOtlpReceiver();
    const url = closed.url;
    await closed.close();
    const printed = vi.spyOn(console, "error").mockImplementation(() => {});
    const gw = await gatewayWith({
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
      OTEL_EXPORTER_OTLP_TIMEOUT: "300",
      OTEL_BSP_SCHEDULE_DELAY: "20",
      OTEL_METRIC_EXPORT_INTERVAL: "100",
    });
    try {
      const token = await gw.token("alice");
      for (let i = 0; i < 5; i++) {
        expect((await tracedProposal(gw, token)).every((o) => o.grant !== undefined)).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const reports = () => printed.mock.calls.filter(([m]) => String(m).includes("telemetry"));
      await waitFor("the report", async () => (reports().length > 0 ? true : undefined));
      expect(reports()).toHaveLength(1);
      expect(String(reports()[0]?.[0])).toMatch(
        /^writ: telemetry export failed: .*; answers are not affected$/,
      );
    } finally {
      await gw.close();
      printed.mockRestore();
    }
  });
});

describe("shutdown", () => {
  it("exports the spans still batched when the gateway closes", async () => {
    const exports = await exportsOf(
      (receiver) => ({
        ...otlpEnv(receiver, "http/json"),
        OTEL_BSP_SCHEDULE_DELAY: "600000",
        OTEL_METRIC_EXPORT_INTERVAL: "600000",
      }),
      async (gw, receiver) => {
        await tracedProposal(gw, await gw.token("alice"));
        expect(receiver.exports).toHaveLength(0);
      },
    );
    expect(jsonSpans(exports).spans.filter((s) => s.name === "decide")).toHaveLength(2);
    expect(jsonMetricPoints(exports).some((p) => p.metric === "writ_decisions_total")).toBe(true);
  });
});

describe("off unless the environment asks", () => {
  const cases: Array<[string, (url: string) => Record<string, string>]> = [
    [
      "no endpoint, only a service name",
      () => ({ OTEL_SERVICE_NAME: "writ", OTEL_TRACES_SAMPLER: "always_on" }),
    ],
    ["OTEL_SDK_DISABLED=true", (url) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_SDK_DISABLED: "true" })],
    [
      "both exporters none",
      (url) => ({
        OTEL_EXPORTER_OTLP_ENDPOINT: url,
        OTEL_TRACES_EXPORTER: "none",
        OTEL_METRICS_EXPORTER: "none",
      }),
    ],
  ];
  for (const [name, env] of cases) {
    it(`starts no SDK and sends nothing: ${name}`, async () => {
      const exports = await exportsOf(
        (receiver) => ({ ...env(receiver.url), OTEL_BSP_SCHEDULE_DELAY: "10" }),
        async (gw) => {
          expect(gw.parts.telemetry).toBeUndefined();
          await tracedProposal(gw, await gw.token("alice"));
          await new Promise((resolve) => setTimeout(resolve, 100));
        },
      );
      expect(exports).toHaveLength(0);
    });
  }

  it("leaves sampling to OTEL_TRACES_SAMPLER: always_off sends metrics and no span", async () => {
    const exports = await exportsOf(
      (receiver) => ({ ...otlpEnv(receiver, "http/json"), OTEL_TRACES_SAMPLER: "always_off" }),
      async (gw, receiver) => {
        await tracedProposal(gw, await gw.token("alice"));
        await waitFor("a metrics export", async () =>
          receiver.exports.some((e) => e.path === "/v1/metrics") ? true : undefined,
        );
      },
    );
    expect(jsonSpans(exports).spans).toHaveLength(0);
  });

  it("exports only the signal whose exporter is not none", async () => {
    await exportsOf(
      (receiver) => ({ ...otlpEnv(receiver, "http/json"), OTEL_METRICS_EXPORTER: "none" }),
      async (gw) => {
        expect(gw.parts.telemetry?.tracing).toBeDefined();
        expect(gw.parts.telemetry?.meter).toBeUndefined();
      },
    );
  });
});

describe("writ serve", () => {
  it("says where it exports, and flushes the last spans when it stops (SIGTERM)", async () => {
    const cwd = await mkdtemp(path.join(os.tmpdir(), "writ-otel-"));
    // The embedded default configuration reads ./policies and keeps its state in ./.writ.
    await cp(path.join(repoRoot, "policies"), path.join(cwd, "policies"), { recursive: true });
    const receiver = await startOtlpReceiver();
    const child = spawn(process.execPath, [path.join(repoRoot, "bin", "writ.mjs"), "serve", "--port", "0"], {
      cwd,
      env: {
        ...process.env,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: "600000",
        OTEL_METRIC_EXPORT_INTERVAL: "600000",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      let out = "";
      child.stdout.setEncoding("utf8");
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (chunk: string) => {
          out += chunk;
          const m = /writ listening on (\S+)/.exec(out);
          if (m?.[1] && out.includes("OpenTelemetry:")) resolve(m[1]);
        });
        child.once("exit", (code) => reject(new Error(`writ serve exited (${code}): ${out}`)));
      });
      expect(out).toContain(
        `OpenTelemetry: traces (http/protobuf) to ${receiver.url}/v1/traces, metrics (http/protobuf) to ${receiver.url}/v1/metrics every 600 s`,
      );
      expect((await fetch(`${url}/v1/tools`)).status).toBe(401);
      expect(receiver.exports).toHaveLength(0);
      child.kill("SIGTERM");
      await once(child, "exit");
      const spans = protobufSpans(receiver.exports);
      expect(spans.map((s) => s.name)).toContain("GET /v1/tools");
      expect(receiver.exports.some((e) => e.path === "/v1/metrics")).toBe(true);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await receiver.close();
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it("refuses grpc at start with one line", async () => {
    const cwd = await mkdtemp(path.join(os.tmpdir(), "writ-otel-"));
    try {
      const run = spawnSync(
        process.execPath,
        [path.join(repoRoot, "bin", "writ.mjs"), "serve", "--port", "0"],
        {
          cwd,
          env: {
            ...process.env,
            OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4317",
            OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
          },
          encoding: "utf8",
          timeout: 20_000,
        },
      );
      expect(run.status).toBe(1);
      expect(run.stderr.trim().split("\n")).toEqual([
        expect.stringMatching(
          /^writ serve: OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: .*http\/protobuf/,
        ),
      ]);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});
