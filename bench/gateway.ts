/**
 * Load test of `POST /v1/proposals` with autocannon (issue 16's measurement), against two
 * baselines served by the same server in the same run:
 * - bare:  a hono route that returns the same JSON answer without doing anything;
 * - floor: a route that parses the body and signs one grant the same way the gateway does.
 * The real route verifies the bearer JWT (cached after the first request, as for any caller
 * that reuses its token), evaluates the compiled policy, signs a grant and writes a durable
 * decision-log entry per call (SQLite `synchronous=full` unless WRIT_BENCH_SYNC=normal).
 *
 * One run measures, after an uncounted warm-up of each route and waiting for the process to be
 * idle between runs:
 * 1. the three routes at each connection count (10, 32 and 64 by default): req/s, latency
 *    percentiles, connection errors and non-2xx answers;
 * 2. `POST /v1/proposals` paced at half of the throughput it reached at `--at` connections (32),
 *    with as many connections: evenly paced (open loop, node:http, latency counted from when each
 *    request was due: the criterion's measurement, latency away from saturation), then once more
 *    with autocannon's `overallRate` for information (each connection sends its share of a
 *    second's requests back to back, then waits for the next second: the load comes in bursts
 *    at the full rate, so its p99 is close to the saturated one);
 * 3. `POST /v1/proposals` evenly paced at 100 req/s (a light load: issue 32's p50), and the floor
 *    route at the same rate (what HTTP and a grant cost at that load, the p50's baseline);
 * 4. the ratios and a PASS/FAIL line per "Done when" criterion of issue 32 for the gateway.
 * Then it checks that the decision log verifies and prints the token cache's hits.
 *
 * The load generator (autocannon, and node:http for the evenly paced run) runs in the same
 * process as the server: by default in a worker thread, with an event loop of its own, as a
 * separate client would (it still shares the machine's cores with the server and its SQLite
 * writer thread); with `--client inline` on the server's own event loop, as when issue 16's
 * baseline was measured, where the client's CPU time counts against the server's. Compare runs
 * made with the same placement; the ratios within a run are what to compare.
 *
 * Run: npx tsx bench/gateway.ts [seconds] [connections] [options]
 *   --seconds <n>            seconds per measured run (default 8; also the first positional)
 *   --connections <a,b,…>    connection counts (default 10,32,64; also the second positional)
 *   --at <n>                 connections of the half-load run, the floor ratio criterion and the
 *                            profile (default 32, else the nearest count measured)
 *   --warmup <n>             seconds of warm-up per route (default seconds / 4, at least 1)
 *   --json <file>            writes a summary of every number printed, the machine (with its load
 *                            average: other processes' share of the CPUs) and the config
 *   --compare <old.json>     prints the old summary against this run's, with new/old ratios;
 *                            with --against <new.json>, compares two summaries without a run
 *   --client thread|inline   where the load generator runs (default thread, see above)
 *   --profile <file>         one more proposals run at --at connections under the CPU profiler
 *                            (not counted), saved as a .cpuprofile, and a summary of it printed
 *
 * With WRIT_BENCH_STORE=postgres it compares stores instead (bench/stores.ts): SQLite, PostgreSQL
 * and two instances on PostgreSQL, as `writ serve` processes, in the same run, at the first
 * connection count given (default 10), `--seconds` per run (default 8).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";
import { defaultConfigFile, parseConfig } from "../src/config/index.ts";
import { jsonDigest } from "../src/core/digest.ts";
import { DevIssuer } from "../src/identity/index.ts";
import { startGateway } from "../src/server.ts";
import { SqliteStore } from "../src/store/index.ts";
import {
  type ClientPlacement,
  type LoadResult,
  loadClient,
  type PacedResult,
  waitUntilIdle,
} from "./lib/load.ts";
import { busyMachineWarning, describeMachine, loadAverage, machineInfo } from "./lib/machine.ts";
import {
  type ProfileSummary,
  printProfileSummary,
  profileDuring,
  projectRootUrl,
  summarizeProfile,
} from "./lib/profile.ts";
import {
  type Criterion,
  loadRow,
  printSummaryComparison,
  readSummary,
  type Summary,
  type SummaryRow,
  writeSummary,
} from "./lib/summary.ts";
import { type Cell, loadCells, loadColumns, printTable } from "./lib/table.ts";
import { proposalBody } from "./proposal.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

// ------------------------------------------------------------------------- options
const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: "string" },
    connections: { type: "string" },
    at: { type: "string" },
    warmup: { type: "string" },
    json: { type: "string" },
    compare: { type: "string" },
    against: { type: "string" },
    profile: { type: "string" },
    client: { type: "string" },
  },
});

function positiveInteger(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`${name} must be a positive integer, not ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return value;
}

const seconds = positiveInteger("--seconds", flags.seconds ?? positionals[0] ?? "8");
const connectionsText = flags.connections ?? positionals[1];
const connectionCounts = [
  ...new Set((connectionsText ?? "10,32,64").split(",").map((n) => positiveInteger("--connections", n))),
].sort((a, b) => a - b);
const warmupSeconds = positiveInteger(
  "--warmup",
  flags.warmup ?? String(Math.max(1, Math.round(seconds / 4))),
);
const wantedAt = positiveInteger("--at", flags.at ?? "32");
const placementText = flags.client ?? "thread";
if (placementText !== "thread" && placementText !== "inline") {
  console.error(`--client must be thread or inline, not ${JSON.stringify(placementText)}`);
  process.exit(2);
}
const placement: ClientPlacement = placementText;
const at = connectionCounts.reduce((best, n) =>
  Math.abs(n - wantedAt) < Math.abs(best - wantedAt) ? n : best,
);

/** What `--compare` puts side by side: the load rows, then the ratio rows. */
const comparedMetrics = [["rps", "p50", "p99", "p99_9"], ["ratio"]];

if (flags.compare !== undefined && flags.against !== undefined) {
  const [older, newer] = await Promise.all([readSummary(flags.compare), readSummary(flags.against)]);
  printSummaryComparison(older, newer, comparedMetrics);
  process.exit(0);
}

if (process.env.WRIT_BENCH_STORE === "postgres") {
  const storeConnections = connectionsText === undefined ? 10 : (connectionCounts[0] ?? 10);
  await (await import("./stores.ts")).compareStores(seconds, storeConnections);
  process.exit(0);
}

// ------------------------------------------------------------------------- the gateway
const machine = await machineInfo(root);
const dir = await mkdtemp(path.join(tmpdir(), "writ-bench-"));
const document = parseYaml(await readFile(defaultConfigFile, "utf8"));
const config = parseConfig(document, root);
const benchConfig = {
  ...config,
  server: { ...config.server, port: 0 },
  store: { sqlite: path.join(dir, "writ.db") },
  policy: { ...config.policy, watch: false },
  identity: {
    ...config.identity,
    dev_issuer: { ...config.identity.dev_issuer, key_file: path.join(dir, "dev.json") },
  },
  grants: { ...config.grants, key_file: path.join(dir, "grants.json") },
};

const body = proposalBody;

let sampleAnswer = "";
const durability = process.env.WRIT_BENCH_SYNC === "normal" ? "normal" : "full";
const store = await SqliteStore.open(benchConfig.store.sqlite, { synchronous: durability });
const running = await startGateway(benchConfig, {
  store,
  configureApp: (app, gateway) => {
    app.post("/bench/bare", (c) => c.body(sampleAnswer, 200, { "content-type": "application/json" }));
    app.post("/bench/floor", async (c) => {
      const parsed: unknown = JSON.parse(await c.req.text());
      const issued = await gateway.grants.issue({
        aud: "writ",
        sub: "alice",
        tnt: "demo",
        act: { name: "repo.read", version: "1" },
        res: { type: "workspace", id: "ws-demo", rev: "1" },
        args: jsonDigest(parsed),
        cnd: [],
        dec: "bench",
        pol: "bench",
        max: 1,
      });
      return c.json({ results: [{ grant: { token: issued.token } }] });
    });
  },
});

const dev = await DevIssuer.create({
  keyFile: benchConfig.identity.dev_issuer.key_file,
  issuer: "writ-dev",
  audience: "writ",
});
const token = await dev.mint({ sub: "alice", tenant: "demo", roles: ["developer"] });
const headers = { "content-type": "application/json", authorization: `Bearer ${token}` };

const probe = await fetch(`${running.url}/v1/proposals`, { method: "POST", headers, body });
sampleAnswer = await probe.text();
if (!probe.ok || !sampleAnswer.includes('"decision":"allow"'))
  throw new Error(`the proposal route did not allow: ${sampleAnswer}`);

// ------------------------------------------------------------------------- the runs
const routes = [
  { key: "bare", label: "bare hono route (same JSON)", path: "/bench/bare" },
  { key: "floor", label: "floor: parse body + sign a grant", path: "/bench/floor" },
  { key: "proposals", label: "POST /v1/proposals", path: "/v1/proposals" },
] as const;
type RouteKey = (typeof routes)[number]["key"];

const client = loadClient(placement);
const load = (route: string, connections: number, runSeconds: number, rate?: number) =>
  client.load({
    url: `${running.url}${route}`,
    headers,
    body,
    connections,
    seconds: runSeconds,
    ...(rate === undefined ? {} : { rate }),
  });

async function idle(): Promise<void> {
  if (!(await waitUntilIdle())) console.error("note: the process was still busy 10 s after a run");
}

/** One run, then the wait until the process is idle again. */
async function measure(route: string, connections: number, runSeconds: number, rate?: number) {
  const result = await load(route, connections, runSeconds, rate);
  await idle();
  return result;
}

/** Issue 32: the p50 at this rate, evenly paced, is at most 2 ms. */
const LIGHT_RATE = 100;

const estimate =
  routes.length * (warmupSeconds + connectionCounts.length * seconds) +
  4 * seconds +
  (flags.profile === undefined ? 0 : seconds);
console.error(`measuring for about ${estimate} s …`);

for (const route of routes) await measure(route.path, at, warmupSeconds);

const results = new Map<RouteKey, Map<number, LoadResult>>(routes.map((route) => [route.key, new Map()]));
for (const connections of connectionCounts) {
  for (const route of routes) {
    results.get(route.key)?.set(connections, await measure(route.path, connections, seconds));
  }
}
const resultOf = (key: RouteKey, connections: number): LoadResult => {
  const result = results.get(key)?.get(connections);
  if (!result) throw new Error(`no run of ${key} at ${connections} connections`);
  return result;
};

const maxRate = resultOf("proposals", at).rps;
const offered = Math.max(1, Math.round(maxRate / 2));
const paced = await measure("/v1/proposals", at, seconds, offered);
/** `route` evenly paced at `rate` over `at` connections (open loop), then the machine idle again. */
async function evenly(route: string, rate: number): Promise<PacedResult> {
  const result = await client.paced({
    url: `${running.url}${route}`,
    headers,
    body,
    connections: at,
    seconds,
    rate,
  });
  await idle();
  return result;
}
const evenlyPaced = await evenly("/v1/proposals", offered);
// Issue 32's latency at a light load: evenly paced at LIGHT_RATE, far from saturation.
const light = await evenly("/v1/proposals", LIGHT_RATE);
// Its baseline: the floor route (the same HTTP, body parse and grant, no decision, nothing
// durable) at the same rate, so that the light-load p50 reads against what HTTP alone costs.
const lightFloor = await evenly("/bench/floor", LIGHT_RATE);

let profiled: { file: string; load: LoadResult; summary: ProfileSummary } | undefined;
if (flags.profile !== undefined) {
  const file = flags.profile;
  const { result, profile } = await profileDuring(file, () => load("/v1/proposals", at, seconds));
  await idle();
  profiled = {
    file,
    load: result,
    summary: summarizeProfile(profile, { root: projectRootUrl(root), top: 12 }),
  };
}

await client.close();
const loadAverageAtEnd = loadAverage();
const verified = await running.gateway.log.verify();
const stats = running.gateway.identity.cacheStats();
await running.close();
await store.close();
await rm(dir, { recursive: true, force: true });

// ------------------------------------------------------------------------- the report
const fewest = connectionCounts[0] ?? at;
const most = connectionCounts[connectionCounts.length - 1] ?? at;
const rows: SummaryRow[] = [];
const tableRows: Cell[][] = [];
for (const route of routes) {
  for (const connections of connectionCounts) {
    const r = resultOf(route.key, connections);
    rows.push(loadRow(`${route.key} @${connections}`, r, { connections }));
    tableRows.push([route.label, connections, ...loadCells(r)]);
  }
}
rows.push(loadRow(`proposals paced @${at}`, paced, { connections: at, offered }));
rows.push(loadRow(`proposals evenly paced @${at}`, evenlyPaced, { connections: at, offered }));
rows.push(loadRow(`proposals at ${LIGHT_RATE}/s @${at}`, light, { connections: at, offered: LIGHT_RATE }));
rows.push(loadRow(`floor at ${LIGHT_RATE}/s @${at}`, lightFloor, { connections: at, offered: LIGHT_RATE }));
const ratioRows: Array<{ name: string; label: string; ratio: number }> = [];
for (const connections of connectionCounts) {
  const proposals = resultOf("proposals", connections).rps;
  ratioRows.push(
    {
      name: `proposals/floor @${connections}`,
      label: `proposals / floor at ${connections}`,
      ratio: proposals / resultOf("floor", connections).rps,
    },
    {
      name: `proposals/bare @${connections}`,
      label: `proposals / bare at ${connections}`,
      ratio: proposals / resultOf("bare", connections).rps,
    },
  );
}
for (const route of routes) {
  ratioRows.push({
    name: `${route.key} ${most}/${fewest}`,
    label: `${route.key}: throughput at ${most} / at ${fewest} connections`,
    ratio: resultOf(route.key, most).rps / resultOf(route.key, fewest).rps,
  });
}
for (const { name, ratio } of ratioRows) rows.push({ name, metrics: { ratio } });

// Issue 32's "Done when" for the gateway (which replaced issue 16's). "Does not fall" allows 5%
// for run-to-run noise.
const floorRatio = resultOf("proposals", at).rps / resultOf("floor", at).rps;
const scaling = resultOf("proposals", most).rps / resultOf("proposals", fewest).rps;
const criteria: Criterion[] = [
  {
    name: `POST /v1/proposals at ${at} connections >= 0.45x the floor route (goal 0.6x)`,
    pass: floorRatio >= 0.45,
    value: floorRatio,
    limit: ">= 0.45",
  },
  {
    name: `POST /v1/proposals throughput does not fall from ${fewest} to ${most} connections`,
    pass: scaling >= 0.95,
    value: scaling,
    limit: ">= 0.95 (5% noise)",
  },
  {
    name: `POST /v1/proposals p99 at half of its maximum, evenly paced (${at} connections) <= 10 ms`,
    pass: evenlyPaced.p99 <= 10,
    value: evenlyPaced.p99,
    limit: "<= 10 ms",
  },
  {
    name: `POST /v1/proposals p50 at ${LIGHT_RATE} req/s, evenly paced (${at} connections) <= 2 ms`,
    pass: light.p50 <= 2,
    value: light.p50,
    limit: "<= 2 ms",
  },
];
if (fewest === most) criteria.splice(1, 1);

console.log(`Writ gateway benchmark: ${describeMachine(machine)}`);
console.log(
  `load generator in this process, ${placement === "thread" ? "in worker threads (its own event loops)" : "on the server's event loop (--client inline)"}, ${seconds} s per run after a ${warmupSeconds} s warm-up per route (not counted); SQLite synchronous=${durability}`,
);
const busy = busyMachineWarning(machine);
if (busy !== undefined) console.log(busy);
if (at !== wantedAt) console.log(`(--at ${wantedAt} was not measured: ${at} connections instead)`);
console.log("");
printTable(tableRows, ["route", "conns", ...loadColumns]);
console.log("");
console.log(
  `POST /v1/proposals paced at half of the ${Math.round(maxRate)} req/s it reached at ${at} connections, over ${at} connections:`,
);
const pacings: Array<[string, LoadResult]> = [
  ["evenly paced (open loop, node:http)", evenlyPaced],
  ["autocannon overallRate (a burst per second; info)", paced],
];
printTable(
  [
    ...pacings.map(([label, r]) => [label, offered, ...loadCells(r)]),
    [`evenly paced at ${LIGHT_RATE} req/s (light load)`, LIGHT_RATE, ...loadCells(light)],
    [`floor route evenly paced at ${LIGHT_RATE} req/s (baseline)`, LIGHT_RATE, ...loadCells(lightFloor)],
  ],
  ["pacing", "offered req/s", "achieved", ...loadColumns.slice(1)],
);
console.log("");
printTable(
  ratioRows.map(({ label, ratio }) => [label, `${ratio.toFixed(3)}x`]),
  ["ratios", ""],
);
console.log("");
console.log("issue 32, Done when (gateway):");
for (const criterion of criteria) {
  console.log(
    `${criterion.pass ? "PASS" : "FAIL"}  ${criterion.name}: ${Number.isInteger(criterion.value) ? criterion.value : criterion.value.toFixed(3)} (${criterion.limit})`,
  );
}
console.log(
  `info  the same rate in autocannon's bursts (each second's requests sent at once): p99 ${paced.p99} ms`,
);
console.log(
  `info  the load generator's own lateness (sending after the due time; counted in the latencies above, none of it the server's): at ${LIGHT_RATE} req/s p50 ${light.sendDelayP50} ms (floor run ${lightFloor.sendDelayP50} ms), at half load p50 ${evenlyPaced.sendDelayP50} ms, p99 ${evenlyPaced.sendDelayP99} ms`,
);
console.log(
  `info  counted from when each request was sent instead: at ${LIGHT_RATE} req/s p50 ${light.fromSendP50} ms (floor run ${lightFloor.fromSendP50} ms), at half load p50 ${evenlyPaced.fromSendP50} ms, p99 ${evenlyPaced.fromSendP99} ms`,
);
console.log("");
console.log(`token cache: ${stats.hits} hits, ${stats.misses} misses`);
console.log(`load average at the end: ${loadAverageAtEnd} (this run included)`);
console.log(`decision log after the run: ${verified.ok ? `intact, ${verified.entries} entries` : "BROKEN"}`);
if (profiled) {
  console.log("");
  console.log(
    `profile of one more POST /v1/proposals run at ${at} connections (${profiled.load.rps.toFixed(0)} req/s under the profiler), saved to ${profiled.file}:`,
  );
  printProfileSummary(profiled.summary);
}

const summary: Summary = {
  bench: "gateway",
  machine,
  config: {
    seconds,
    warmupSeconds,
    connections: connectionCounts,
    at,
    durability,
    client: placement,
    store: "sqlite",
    loadGenerator: "autocannon, in process",
  },
  rows,
  criteria,
  notes: {
    tokenCacheHits: stats.hits,
    tokenCacheMisses: stats.misses,
    decisionLogIntact: verified.ok,
    loadAverageAtEnd,
    ...(verified.ok ? { decisionLogEntries: verified.entries } : {}),
    ...(profiled ? { profile: profiled.file, profiledRps: profiled.load.rps } : {}),
  },
};
if (flags.json !== undefined) {
  await writeSummary(flags.json, summary);
  console.log(`summary written to ${flags.json}`);
}
if (flags.compare !== undefined) {
  console.log("");
  printSummaryComparison(await readSummary(flags.compare), summary, [
    ["rps", "p50", "p99", "p99_9"],
    ["ratio"],
  ]);
}
if (!verified.ok) process.exitCode = 1;
