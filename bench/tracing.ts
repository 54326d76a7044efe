/**
 * What the pipeline's tracing hooks cost with OpenTelemetry off (issue 17): proposals decided
 * in process through `handleProposal` (stages 1–8, no HTTP, no JWT: the caller's subject is
 * given), 32 in flight, SQLite with `synchronous=normal` so that the disk does not hide the CPU.
 *
 * It loads the gateway from `--src <checkout>` (default: this one), so the same run compares two
 * trees, e.g. main exported with `git archive main | tar -x -C /tmp/writ-main` (and
 * node_modules linked there):
 *
 *   npx tsx bench/tracing.ts --src /tmp/writ-main   # before
 *   npx tsx bench/tracing.ts                        # after
 *
 * With `--otel` (this tree only) it measures tracing on instead: traces and metrics exported
 * as OTLP/protobuf to a loopback sink that answers 200, each proposal in a request span as the
 * HTTP entrance makes it.
 *
 * Prints proposals per second and the process's CPU time per proposal for each of `--rounds`
 * rounds of `--proposals` proposals, then their medians. CPU time is the steadier number on a
 * shared machine; alternate the two trees' runs a few times all the same.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { ROOT_CONTEXT } from "@opentelemetry/api";
import { parse as parseYaml } from "yaml";
import type { GatewayConfig } from "../src/config/index.ts";
import type { Gateway, ProposalRequest } from "../src/core/gateway.ts";
import type { Subject } from "../src/core/types.ts";

const { values } = parseArgs({
  options: {
    src: { type: "string" },
    proposals: { type: "string", default: "3000" },
    rounds: { type: "string", default: "5" },
    inflight: { type: "string", default: "32" },
    otel: { type: "boolean", default: false },
  },
});
const root = path.resolve(values.src ?? path.join(path.dirname(fileURLToPath(import.meta.url)), ".."));
const load = (file: string) => import(pathToFileURL(path.join(root, file)).href);

const configModule: {
  defaultConfigFile: string;
  parseConfig: (doc: unknown, base: string) => GatewayConfig;
} = await load("src/config/index.ts");
const { startGateway } = await load("src/server.ts");
const { handleProposal } = await load("src/pipeline/index.ts");
const { SqliteStore } = await load("src/store/index.ts");

let sink: ReturnType<typeof createServer> | undefined;
if (values.otel) {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/x-protobuf" }).end());
  });
  sink = server;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${port}`;
  process.env.OTEL_METRIC_EXPORT_INTERVAL = "1000";
}
const tracing = values.otel ? await load("src/observability/tracing.ts") : undefined;

const dir = await mkdtemp(path.join(tmpdir(), "writ-bench-tracing-"));
const config = configModule.parseConfig(
  parseYaml(await readFile(configModule.defaultConfigFile, "utf8")),
  root,
);
const store = await SqliteStore.open(path.join(dir, "writ.db"), { synchronous: "normal" });
const running = await startGateway(
  {
    ...config,
    server: { ...config.server, host: "127.0.0.1", port: 0 },
    policy: { ...config.policy, watch: false },
    identity: {
      ...config.identity,
      dev_issuer: { ...config.identity.dev_issuer, key_file: path.join(dir, "dev.json") },
    },
    grants: { ...config.grants, key_file: path.join(dir, "grants.json") },
  },
  { store },
);
const gw: Gateway = running.gateway;
const subject: Subject = {
  id: "alice",
  tenant: "demo",
  roles: ["developer"],
  scopes: [],
  issuer: "bench",
  claims: {},
};
let n = 0;
const propose = (): Promise<Array<{ decision: string }>> => {
  const req: ProposalRequest = {
    authorization: undefined,
    subject,
    format: "openai-chat",
    payload: {
      id: `call_${n}`,
      type: "function",
      function: { name: "repo_read", arguments: JSON.stringify({ workspace: "ws-demo", path: "README.md" }) },
    },
    execute: false,
    requestId: `bench-${n++}`,
  };
  const tracer = running.parts.telemetry?.tracing;
  if (tracing === undefined || tracer === undefined) return handleProposal(gw, req);
  return tracing
    .requestSpan(tracer, "POST /v1/proposals", ROOT_CONTEXT, {}, () => handleProposal(gw, req))
    .then(({ value, span }: { value: Array<{ decision: string }>; span: { end(): void } }) => {
      span.end();
      return value;
    });
};

const [first] = await propose();
if (first?.decision !== "allow") throw new Error(`the sample policy did not allow: ${JSON.stringify(first)}`);

/** Proposals per second of wall time, and CPU µs per proposal (every thread of the process). */
async function round(count: number, inflight: number): Promise<{ rate: number; cpuUs: number }> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (next < count) {
        next++;
        await propose();
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return { rate: count / ((performance.now() - started) / 1000), cpuUs: (used.user + used.system) / count };
}

const proposals = Number(values.proposals);
const inflight = Number(values.inflight);
await round(Math.min(1000, proposals), inflight); // warm-up
const rounds: Array<{ rate: number; cpuUs: number }> = [];
for (let i = 0; i < Number(values.rounds); i++) rounds.push(await round(proposals, inflight));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const rates = rounds.map((r) => r.rate);
const cpus = rounds.map((r) => r.cpuUs);
console.log(
  `${root}: ${rates.map((r) => r.toFixed(0)).join(" ")} proposals/s (median ${median(rates).toFixed(0)}); ` +
    `CPU ${cpus.map((c) => c.toFixed(0)).join(" ")} µs/proposal (median ${median(cpus).toFixed(0)})`,
);
await running.close();
sink?.close();
await rm(dir, { recursive: true, force: true });
