/**
 * Issue 17's "done when" for decision-log shipping, end to end: a gateway configured with
 * `decision_log.ship` ships its decisions to a loopback decision-log service that fails the first
 * uploads (HTTP 500 and a dropped connection); the gateway is stopped and a new one started on the
 * same SQLite file in between; the service ends with every entry exactly once, in seq order, as
 * valid OPA decision-log events, sent with the bearer token from the environment.
 */
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { DecisionLogEntry } from "../../src/store/types.ts";
import { canonicalCall, README_ARGS, WS } from "../e2e/api.ts";
import { metricsText, sample } from "../e2e/metrics.ts";
import { tempDir } from "../store/fixtures.ts";
import { startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
import { type DecisionLogService, startDecisionLogService } from "./ship-service.ts";

const TOKEN_ENV = "WRIT_TEST_DECISION_LOG_TOKEN";
let tmp: ReturnType<typeof tempDir>;
let service: DecisionLogService;

beforeAll(async () => {
  tmp = tempDir();
  service = await startDecisionLogService("/v1/decisions");
  process.env[TOKEN_ENV] = "ship-secret";
});

afterAll(async () => {
  delete process.env[TOKEN_ENV];
  await service?.close();
  await tmp?.cleanup();
});

/** A gateway on the shared SQLite file, shipping to the service. */
function startShipping(): Promise<TestGateway> {
  return startTestGateway({
    configure: (document) => ({
      ...document,
      store: { sqlite: path.join(tmp.dir, "shared.db") },
      credentials: {
        ...(typeof document.credentials === "object" ? document.credentials : {}),
        "decision-logs": { from: "env", env: TOKEN_ENV },
      },
      decision_log: {
        ship: {
          service: `${service.url}/`,
          resource: "/v1/decisions",
          credentials_ref: "decision-logs",
          reporting: { upload_size_limit_bytes: 2048, min_delay_seconds: 0.02, max_delay_seconds: 0.1 },
          timeout_ms: 1000,
          lease_s: 2,
          shutdown_flush_ms: 300,
        },
      },
    }),
  });
}

async function decide(gw: TestGateway, n: number): Promise<void> {
  const alice = await gw.token("alice");
  for (let i = 0; i < n; i++) {
    const args = i % 3 === 2 ? { workspace: WS, path: ".env" } : README_ARGS;
    const answer = await gw.propose(alice, {
      format: "canonical",
      payload: canonicalCall("repo.read", args),
    });
    expect(answer.status).toBe(200);
  }
}

/** Waits until `gw`'s /metrics counts `total` entries shipped; the metrics text then. */
function shippedBy(gw: TestGateway, total: number): Promise<string> {
  return waitFor(`${total} entries acknowledged`, async () => {
    const text = await metricsText(gw);
    return sample(text, "writ_decision_log_shipped_total") === total ? text : undefined;
  });
}

it("ships every entry exactly once, in seq order, through failed uploads and restarts", async () => {
  // First gateway: the service fails the first uploads (HTTP 500, then a dropped connection),
  // then takes the first decisions; then it fails every upload until the gateway is stopped.
  service.plan = ["500", "drop"];
  const first = await startShipping();
  try {
    await decide(first, 3);
    await shippedBy(first, 3);
    expect(service.failed).toBe(2);
    service.otherwise = "500";
    await decide(first, 3);
    // The lag is measured at each attempt: the last three entries wait, and the attempt's failure
    // is counted once its answer came (the lag may be read before it).
    const failedMetrics = await waitFor("the lag of the last entries and their failed upload", async () => {
      const text = await metricsText(first);
      const lag = sample(text, "writ_decision_log_ship_lag_entries");
      const failures = sample(text, 'writ_decision_log_ship_failures_total{reason="status"}');
      return lag === 3 && failures > 1 ? text : undefined;
    });
    expect(sample(failedMetrics, 'writ_decision_log_ship_failures_total{reason="network"}')).toBe(1);
  } finally {
    await first.close();
  }
  expect(service.events().map((e) => e.req_id)).toEqual([1, 2, 3]);

  // Second gateway on the same file: the service is back; it resumes after seq 3 (the cursor in
  // the store), and ships the backlog and its own decisions.
  service.otherwise = "ok";
  const second = await startShipping();
  await decide(second, 3);
  const headSeq = (await second.gateway.store.decisionHead())?.seq ?? 0;
  expect(headSeq).toBe(9);
  const shippedMetrics = await shippedBy(second, headSeq - 3);
  expect(sample(shippedMetrics, "writ_decision_log_ship_lag_entries")).toBe(0);
  const entries = await second.gateway.store.readDecisions(1, 1000);
  await second.close();

  expectShipped(entries);
});

function expectShipped(entries: readonly DecisionLogEntry[]): void {
  const events = service.events();
  expect(service.invalid).toEqual([]);
  expect(service.failed).toBeGreaterThanOrEqual(2);
  // Split by the size limit: several uploads, each sent with the credential from the environment.
  expect(service.uploads.length).toBeGreaterThan(1);
  for (const upload of service.uploads) {
    expect(upload.bytes).toBeLessThanOrEqual(2048);
    expect(upload.headers.authorization).toBe("Bearer ship-secret");
  }
  expect(events.map((e) => e.req_id)).toEqual(entries.map((e) => e.seq));
  for (const [i, event] of events.entries()) {
    const entry = entries[i];
    expect(event).toMatchObject({
      decision_id: entry?.decision_id,
      path: entry?.path,
      timestamp: entry?.timestamp,
      labels: { app: "writ", decision: entry?.decision, hash: entry?.hash },
    });
    expect(event.input).toEqual(entry?.input);
    expect(event.result).toEqual(entry?.result);
  }
  // The decisions themselves: allowed reads and denied .env reads, with their policy results.
  expect(new Set(events.map((e) => e.labels.decision))).toEqual(new Set(["allow", "deny"]));
  expect(events.filter((e) => e.path === "writ/decision").length).toBe(9);
  expect(new Set(events.map((e) => e.decision_id)).size).toBe(events.length);
}
