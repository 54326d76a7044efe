/**
 * Load test of `POST /v1/proposals` with autocannon, against two baselines served by the same
 * server in the same run:
 * - bare:  a hono route that returns the same JSON answer without doing anything;
 * - floor: a route that parses the body and signs one grant the same way the gateway does.
 * The real route verifies the bearer JWT (cached after the first request, as for any caller
 * that reuses its token), evaluates the compiled policy, signs a grant and writes a durable
 * decision-log entry per call.
 *
 * Run: npx tsx bench/gateway.ts [seconds-per-run] [connections]
 *
 * With WRIT_BENCH_STORE=postgres it compares stores instead (bench/stores.ts): SQLite, PostgreSQL
 * and two instances on PostgreSQL, as `writ serve` processes, in the same run.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { parse as parseYaml } from "yaml";
import { defaultConfigFile, parseConfig } from "../src/config/index.ts";
import { jsonDigest } from "../src/core/digest.ts";
import { DevIssuer } from "../src/identity/index.ts";
import { startGateway } from "../src/server.ts";
import { SqliteStore } from "../src/store/index.ts";
import { proposalBody } from "./proposal.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const seconds = Number(process.argv[2] ?? "10");
const connections = Number(process.argv[3] ?? "10");

if (process.env.WRIT_BENCH_STORE === "postgres") {
  await (await import("./stores.ts")).compareStores(seconds, connections);
  process.exit(0);
}

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

async function load(route: string): Promise<{ rps: number; p50: number; p99: number; errors: number }> {
  const result = await autocannon({
    url: `${running.url}${route}`,
    method: "POST",
    headers,
    body,
    connections,
    duration: seconds,
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

const bare = await load("/bench/bare");
const floor = await load("/bench/floor");
const proposals = await load("/v1/proposals");
const verified = await running.gateway.log.verify();
const stats = running.gateway.identity.cacheStats();
await running.close();
await store.close();
await rm(dir, { recursive: true, force: true });

const row = (name: string, r: typeof bare) =>
  console.log(
    `${name.padEnd(34)}${r.rps.toFixed(0).padStart(9)} req/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms   errors ${r.errors}`,
  );
console.log(`autocannon: ${connections} connections, ${seconds} s per run; SQLite synchronous=${durability}`);
row("bare hono route (same JSON)", bare);
row("floor: parse body + sign a grant", floor);
row("POST /v1/proposals", proposals);
console.log("");
console.log(`proposals / bare:  ${(proposals.rps / bare.rps).toFixed(3)}`);
console.log(`proposals / floor: ${(proposals.rps / floor.rps).toFixed(3)}`);
console.log(`token cache: ${stats.hits} hits, ${stats.misses} misses`);
console.log(`decision log after the run: ${verified.ok ? `intact, ${verified.entries} entries` : "BROKEN"}`);
