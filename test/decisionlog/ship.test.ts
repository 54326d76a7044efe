/**
 * Decision-log shipping against a loopback decision-log service, on real SQLite files: uploads
 * split by the size limit, the cursor surviving a restart, retries with one warning per failure
 * streak, the shutdown bound, and one shipper per destination among instances on one file.
 */
import { gunzipSync, gzipSync } from "node:zlib";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { DecisionLogShipper, firstBatch, type ShipperOptions } from "../../src/decisionlog/ship/index.ts";
import { GatewayMetrics } from "../../src/observability/metrics.ts";
import { PostgresStore } from "../../src/store/postgres.ts";
import { SqliteStore } from "../../src/store/sqlite.ts";
import type { Store } from "../../src/store/types.ts";
import { sample } from "../e2e/metrics.ts";
import { newEntry, tempDir } from "../store/fixtures.ts";
import { waitFor } from "../support/gateway.ts";
import { postgresUnavailable, startTestPostgres, type TestPostgres } from "../support/postgres.ts";
import { type DecisionLogService, opaEventSchema, startDecisionLogService } from "./ship-service.ts";

const opaEvents = z.array(opaEventSchema);

let tmp: ReturnType<typeof tempDir>;
let service: DecisionLogService;

beforeEach(async () => {
  tmp = tempDir();
  service = await startDecisionLogService();
});

afterEach(async () => {
  await tmp.cleanup();
  await service.close();
});

async function openStore(file = tmp.file()): Promise<SqliteStore> {
  return tmp.track(await SqliteStore.open(file));
}

function shipper(store: Store, options: Partial<ShipperOptions> = {}): DecisionLogShipper {
  const s = new DecisionLogShipper({
    store,
    url: `${service.url}/logs`,
    headers: async () => ({ authorization: "Bearer test-token" }),
    limitBytes: 32_768,
    minDelayMs: 10,
    maxDelayMs: 40,
    timeoutMs: 1000,
    leaseMs: 2000,
    flushMs: 500,
    warn: () => {},
    ...options,
  });
  return tmp.track(s);
}

/** `n` entries with distinct, partly incompressible inputs (so that sizes grow with n). */
async function append(store: Store, n: number): Promise<void> {
  await store.appendDecisions(
    Array.from({ length: n }, (_, i) =>
      newEntry({ input: { note: `${i}-${crypto.randomUUID()}-${crypto.randomUUID()}` } }),
    ),
  );
}

/**
 * Waits until the shippers counted `total` entries as acknowledged (the service has them, and the
 * shipper has moved its cursor past them).
 */
function acknowledged(total: number, ...shippers: DecisionLogShipper[]): Promise<true> {
  return waitFor(`${total} entries acknowledged`, async () =>
    shippers.reduce((sum, s) => sum + s.shipped, 0) === total ? true : undefined,
  );
}

/** Every entry of the store reached the service exactly once, in seq order, as its OPA event. */
async function expectExactlyOnce(store: Store): Promise<void> {
  const entries = await store.readDecisions(1, 10_000);
  const events = service.events();
  expect(events.map((e) => e.req_id)).toEqual(entries.map((e) => e.seq));
  expect(events.map((e) => e.decision_id)).toEqual(entries.map((e) => e.decision_id));
  expect(service.invalid).toEqual([]);
}

describe("decision-log shipping", () => {
  it("splits a backlog by the gzipped size limit, each upload nearly full or full", async () => {
    const store = await openStore();
    await append(store, 40);
    const entries = await store.readDecisions(1, 100);
    const limit = 1024;
    let rest = entries;
    let ratio: number | undefined;
    const batches: Array<{ count: number; bytes: number }> = [];
    while (rest.length > 0) {
      const batch = await firstBatch(rest, limit, ratio);
      expect(batch.body.length).toBeLessThanOrEqual(limit);
      expect(batch.lastSeq).toBe(rest[batch.count - 1]?.seq);
      expect(opaEvents.parse(JSON.parse(gunzipSync(batch.body).toString())).map((e) => e.req_id)).toEqual(
        rest.slice(0, batch.count).map((e) => e.seq),
      );
      batches.push({ count: batch.count, bytes: batch.body.length });
      ratio = batch.ratio;
      rest = rest.slice(batch.count);
    }
    expect(batches.length).toBeGreaterThan(3);

    // Through the service: several uploads, each within the limit and at least 90% full unless
    // one more entry would not have fit, every entry once and in order.
    const s = shipper(store, { limitBytes: limit });
    s.start();
    await acknowledged(40, s);
    expect(service.uploads.length).toBeGreaterThan(3);
    for (const [i, upload] of service.uploads.entries()) {
      expect(upload.bytes).toBeLessThanOrEqual(limit);
      const next = service.uploads[i + 1]?.events[0];
      if (next === undefined || upload.bytes >= limit * 0.9) continue;
      expect(gzipSync(JSON.stringify([...upload.events, next])).length).toBeGreaterThan(limit);
    }
    expect(service.uploads[0]?.headers.authorization).toBe("Bearer test-token");
    await expectExactlyOnce(store);
  });

  it("sends an entry larger than the limit alone, and says so (nothing is dropped)", async () => {
    const store = await openStore();
    await store.appendDecisions([
      newEntry(),
      newEntry({ input: { blob: Array.from({ length: 200 }, () => crypto.randomUUID()).join("") } }),
      newEntry(),
    ]);
    const warnings: string[] = [];
    const s = shipper(store, { limitBytes: 2048, warn: (line) => warnings.push(line) });
    s.start();
    await acknowledged(3, s);
    expect(service.uploads.map((u) => u.events.map((e) => e.req_id))).toEqual([[1], [2], [3]]);
    expect(warnings.join("\n")).toMatch(/entry seq 2 is \d+ bytes gzipped, above upload_size_limit_bytes/);
  });

  it("keeps the cursor in the store: a restart ships only what was not acknowledged", async () => {
    const file = tmp.file("restart.db");
    const first = await openStore(file);
    await append(first, 5);
    const before = shipper(first);
    before.start();
    await acknowledged(5, before);
    await before.close();
    await first.close();

    const second = await openStore(file);
    expect((await second.logShipping(`${service.url}/logs`))?.shipped_seq).toBe(5);
    await append(second, 3);
    const after = shipper(second);
    after.start();
    await acknowledged(3, after);
    expect(after.shipped).toBe(3);
    expect(service.uploads.at(-1)?.events.map((e) => e.req_id)).toEqual([6, 7, 8]);
    await expectExactlyOnce(second);
  });

  it("retries failed uploads with back-off: one warning per failure streak, failures counted by reason", async () => {
    const store = await openStore();
    await append(store, 4);
    service.plan = ["500", "drop", "500"];
    const warnings: string[] = [];
    const metrics = new GatewayMetrics();
    const s = shipper(store, { metrics, warn: (line) => warnings.push(line) });
    s.start();
    await acknowledged(4, s);
    expect(service.failed).toBe(3);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/an upload failed \(it answered HTTP 500\); retrying with back-off/);
    expect(warnings[1]).toMatch(/recovered after 3 failed attempts/);
    const text = metrics.render();
    expect(sample(text, 'writ_decision_log_ship_failures_total{reason="status"}')).toBe(2);
    expect(sample(text, 'writ_decision_log_ship_failures_total{reason="network"}')).toBe(1);
    expect(sample(text, "writ_decision_log_shipped_total")).toBe(4);
    expect(sample(text, "writ_decision_log_ship_lag_entries")).toBe(0);
    await expectExactlyOnce(store);
  });

  it("counts an upload that gets no answer within timeout_ms as a timeout, and retries it", async () => {
    const store = await openStore();
    await append(store, 2);
    service.plan = ["hang"];
    const metrics = new GatewayMetrics();
    const s = shipper(store, { metrics, timeoutMs: 200 });
    s.start();
    await acknowledged(2, s);
    expect(sample(metrics.render(), 'writ_decision_log_ship_failures_total{reason="timeout"}')).toBe(1);
    await expectExactlyOnce(store);
  });

  it("stops within its flush bound while the service is down, and keeps the entries for the next start", async () => {
    const store = await openStore();
    await append(store, 3);
    service.otherwise = "500";
    const warnings: string[] = [];
    const metrics = new GatewayMetrics();
    const s = shipper(store, { metrics, flushMs: 300, warn: (line) => warnings.push(line) });
    s.start();
    await waitFor("a failed upload", async () => (service.failed > 0 ? true : undefined));
    expect(sample(metrics.render(), "writ_decision_log_ship_lag_entries")).toBe(3);
    await s.close();
    expect(warnings.at(-1)).toMatch(/stopped with 3 entries not shipped yet \(from seq 1\)/);
    expect(service.uploads).toEqual([]);
    expect((await store.logShipping(`${service.url}/logs`))?.shipped_seq).toBe(0);
  });

  it("never skips an entry: a gap in the log (an entry deleted behind Writ's back) stops shipping there", async () => {
    const file = tmp.file("gap.db");
    const store = await openStore(file);
    await append(store, 3);
    const db = new Database(file);
    db.prepare("DELETE FROM decisions WHERE seq = 2").run();
    db.close();
    const warnings: string[] = [];
    const metrics = new GatewayMetrics();
    const s = shipper(store, { metrics, warn: (line) => warnings.push(line) });
    s.start();
    await acknowledged(1, s);
    await waitFor("two failed attempts", async () =>
      sample(metrics.render(), 'writ_decision_log_ship_failures_total{reason="store"}') >= 2
        ? true
        : undefined,
    );
    expect(service.events().map((e) => e.req_id)).toEqual([1]);
    expect(warnings).toEqual([expect.stringMatching(/no entry at seq 2 \(the next one is seq 3\)/)]);
  });

  it("counts unreadable credentials as their own failure, and ships once they can be read", async () => {
    const store = await openStore();
    await append(store, 2);
    let token: string | undefined;
    const metrics = new GatewayMetrics();
    const s = shipper(store, {
      metrics,
      headers: async () => {
        if (token === undefined) throw new Error("WRIT_TOKEN is not set");
        return { authorization: `Bearer ${token}` };
      },
    });
    s.start();
    await waitFor("a credentials failure", async () =>
      sample(metrics.render(), 'writ_decision_log_ship_failures_total{reason="credentials"}') > 0
        ? true
        : undefined,
    );
    expect(service.failed + service.uploads.length).toBe(0);
    token = "late";
    await acknowledged(2, s);
    expect(service.uploads[0]?.headers.authorization).toBe("Bearer late");
  });

  it("two instances on one SQLite file: one ships, the other takes over when it stops", async () => {
    const file = tmp.file("shared.db");
    await oneShipsAtATime(await openStore(file), await openStore(file));
  });

  describe.skipIf(postgresUnavailable !== undefined)("on PostgreSQL", () => {
    let server: TestPostgres;
    beforeAll(async () => {
      server = await startTestPostgres();
    });
    afterAll(async () => {
      await server?.stop();
    });

    it("two instances on one database: one ships, the other takes over when it stops", async () => {
      const url = await server.createDatabase();
      const open = async () => tmp.track(await PostgresStore.open(url, { maxConnections: 2 }));
      await oneShipsAtATime(await open(), await open());
    });
  });
});

/** Two instances on one store, both shipping to the service: one at a time, each entry once. */
async function oneShipsAtATime(a: Store, b: Store): Promise<void> {
  const first = shipper(a, { holder: "instance-a" });
  const second = shipper(b, { holder: "instance-b", leaseMs: 600 });
  first.start();
  second.start();
  await append(a, 6);
  await acknowledged(6, first, second);
  await append(b, 4);
  await acknowledged(10, first, second);
  // One of them shipped everything.
  expect([first.shipped, second.shipped].sort()).toEqual([0, 10]);
  const [holder, standby] = first.shipped > 0 ? [first, second] : [second, first];
  await holder.close();
  await append(a, 2);
  await acknowledged(12, first, second);
  expect(standby.shipped).toBe(2);
  await expectExactlyOnce(a);
}
