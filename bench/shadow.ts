/**
 * What shadow mode (policy.shadow) costs the live traffic: `POST /v1/proposals` on three gateways
 * in one process, run in turn in the same run: without a shadow policy, with a candidate that
 * agrees on every call (an identical copy of the sample policy) and with one that disagrees on
 * every call (it refuses README reads, the call this bench sends: a `writ/shadow` entry per call,
 * the worst case). Each is measured saturated at `--connections` and evenly paced at `--rate`
 * (latency from when each request was due); the ratios to the gateway without a shadow are what
 * to read. Every run also checks the answers: the live decision (allow) whatever the candidate.
 *
 * Run: npx tsx bench/shadow.ts [--seconds 5] [--connections 10] [--rate 300] [--json file]
 */
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";
import { defaultConfigFile, parseConfig } from "../src/config/index.ts";
import { DevIssuer } from "../src/identity/index.ts";
import { startGateway } from "../src/server.ts";
import { type LoadResult, loadClient, waitUntilIdle } from "./lib/load.ts";
import { describeMachine, machineInfo } from "./lib/machine.ts";
import { loadCells, loadColumns, printTable } from "./lib/table.ts";
import { proposalBody } from "./proposal.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values: flags } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    connections: { type: "string", default: "10" },
    rate: { type: "string", default: "300" },
    json: { type: "string" },
  },
});
const seconds = Number(flags.seconds);
const connections = Number(flags.connections);
const rate = Number(flags.rate);

const dir = await mkdtemp(path.join(tmpdir(), "writ-bench-shadow-"));
const samples = path.join(root, "policies");
const agreeing = path.join(dir, "agreeing");
const disagreeing = path.join(dir, "disagreeing");
await cp(samples, agreeing, { recursive: true });
await cp(samples, disagreeing, { recursive: true });
const rego = path.join(disagreeing, "writ", "decision.rego");
await writeFile(
  rego,
  `${await readFile(rego, "utf8")}
denials contains reason("readme_closed", "README files are not to be read") if {
	input.action.name == "repo.read"
	contains(args.path, "README")
}
`,
);

const base = parseConfig(parseYaml(await readFile(defaultConfigFile, "utf8")), root);
const dev = await DevIssuer.create({
  keyFile: path.join(dir, "dev.json"),
  issuer: "writ-dev",
  audience: "writ",
});
const token = await dev.mint({ sub: "alice", tenant: "demo", roles: ["developer"] });
const headers = { "content-type": "application/json", authorization: `Bearer ${token}` };

async function gateway(name: string, shadowDir: string | undefined) {
  const at = path.join(dir, name);
  return startGateway({
    ...base,
    server: { ...base.server, port: 0 },
    store: { sqlite: path.join(at, "writ.db") },
    policy: {
      ...base.policy,
      watch: false,
      ...(shadowDir === undefined
        ? {}
        : { shadow: { dir: shadowDir, watch: false, bundle_poll_interval_s: 10, max_queue: 1000 } }),
    },
    identity: {
      ...base.identity,
      dev_issuer: { ...base.identity.dev_issuer, key_file: path.join(dir, "dev.json") },
    },
    grants: { ...base.grants, key_file: path.join(at, "grants.json") },
  });
}

const variants = [
  { key: "none", label: "no shadow policy", running: await gateway("none", undefined) },
  { key: "agree", label: "shadow policy, agrees on every call", running: await gateway("agree", agreeing) },
  {
    key: "disagree",
    label: "shadow policy, disagrees on every call",
    running: await gateway("disagree", disagreeing),
  },
] as const;

for (const v of variants) {
  const answer = await (
    await fetch(`${v.running.url}/v1/proposals`, { method: "POST", headers, body: proposalBody })
  ).text();
  if (!answer.includes('"decision":"allow"'))
    throw new Error(`${v.label}: the live decision changed: ${answer}`);
}

const client = loadClient("thread");
const results = new Map<string, { saturated: LoadResult; paced: LoadResult }>();
console.error(`measuring for about ${variants.length * (2 * seconds + 4)} s …`);
for (const v of variants) {
  const url = `${v.running.url}/v1/proposals`;
  // Warm-ups, not counted: the gateway saturated, then the paced client (its first run starts
  // its worker thread, which would otherwise land in the first variant's latencies).
  await client.load({ url, headers, body: proposalBody, connections, seconds: 1 });
  await client.paced({ url, headers, body: proposalBody, connections, seconds: 1, rate });
  await waitUntilIdle();
  const saturated = await client.load({ url, headers, body: proposalBody, connections, seconds });
  await waitUntilIdle();
  const paced = await client.paced({ url, headers, body: proposalBody, connections, seconds, rate });
  await waitUntilIdle();
  results.set(v.key, { saturated, paced });
}
await client.close();

const machine = await machineInfo(root);
console.log(`Writ shadow-mode benchmark: ${describeMachine(machine)}`);
console.log(`\nsaturated, ${connections} connections, ${seconds} s each:`);
printTable(
  variants.map((v) => [v.label, ...loadCells(results.get(v.key)!.saturated)]),
  ["gateway", ...loadColumns],
);
console.log(`\nevenly paced at ${rate} req/s over ${connections} connections:`);
printTable(
  variants.map((v) => [v.label, ...loadCells(results.get(v.key)!.paced)]),
  ["gateway", ...loadColumns],
);
const none = results.get("none")!;
console.log("\nagainst no shadow policy (same run):");
const rows: Array<[string, number]> = [];
for (const v of variants.slice(1)) {
  const r = results.get(v.key)!;
  rows.push([`${v.key}: throughput`, r.saturated.rps / none.saturated.rps]);
  rows.push([`${v.key}: paced p50 (ms added)`, r.paced.p50 - none.paced.p50]);
  rows.push([`${v.key}: paced p99 (ms added)`, r.paced.p99 - none.paced.p99]);
}
printTable(rows.map(([name, value]) => [name, value.toFixed(3)]));

for (const v of variants) await v.running.close();
if (flags.json !== undefined) {
  const summary = {
    bench: "shadow",
    machine,
    config: { seconds, connections, rate },
    runs: Object.fromEntries(results),
    ratios: Object.fromEntries(rows),
  };
  await writeFile(flags.json, `${JSON.stringify(summary, null, 2)}\n`);
}
await rm(dir, { recursive: true, force: true });
