/**
 * The cost of a Code Mode run against the same calls proposed one by one, in the same process and
 * the same run: a real gateway on loopback (default configuration, temp SQLite, the demo
 * repository), one client, each variant timed end to end over HTTP:
 *
 * - proposals:  ten `POST /v1/proposals` with `execute`, one `repo_read` each, one after another
 *               (a model that calls a tool per turn);
 * - run-seq:    one `POST /v1/run_code` whose program awaits ten `repo_read`s in a loop;
 * - run-par:    one `POST /v1/run_code` whose program reads ten times with `Promise.all` (the
 *               sandbox runs at most `max_concurrent_calls` at once).
 *
 * Every inner call of a run walks the whole pipeline, as a proposal's does (policy, grant, durable
 * log entry, dispatch, result); a run adds its own decision and entry, the sandbox (a fresh QuickJS
 * runtime, the program's transpilation) and the crossings of the sandbox's boundary.
 *
 * Run: npx tsx bench/codemode.ts [--iterations 30] [--warmup 5] [--json <file>]
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { z } from "zod";
import { startGateway } from "../src/server.ts";
import { aliceToken, localGatewayConfig } from "./lib/local-gateway.ts";
import { machineInfo } from "./lib/machine.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const cli = parseArgs({
  options: {
    iterations: { type: "string", default: "30" },
    warmup: { type: "string", default: "5" },
    json: { type: "string" },
  },
});
const iterations = z.coerce.number().int().min(1).parse(cli.values.iterations);
const warmup = z.coerce.number().int().min(0).parse(cli.values.warmup);
const CALLS = 10;

const dir = await mkdtemp(path.join(tmpdir(), "writ-bench-codemode-"));
const running = await startGateway(await localGatewayConfig(dir));
const token = await aliceToken(dir);

const read = { workspace: "ws-demo", path: "README.md" };
const proposalBody = JSON.stringify({
  format: "canonical",
  payload: { tool: "repo_read", arguments: read },
  execute: true,
});
const sequential = JSON.stringify({
  code: `const out = [];\nfor (let i = 0; i < ${CALLS}; i++) out.push((await tools.repo_read(${JSON.stringify(read)})).hash);\nreturn out.length;`,
});
const parallel = JSON.stringify({
  code: `const all = await Promise.all(Array.from({ length: ${CALLS} }, () => tools.repo_read(${JSON.stringify(read)})));\nreturn all.length;`,
});

async function post(route: string, body: string): Promise<void> {
  const response = await fetch(`${running.url}${route}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body,
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${route}: HTTP ${response.status}: ${text.slice(0, 500)}`);
}

const variants = {
  proposals: async () => {
    for (let i = 0; i < CALLS; i++) await post("/v1/proposals", proposalBody);
  },
  "run-seq": () => post("/v1/run_code", sequential),
  "run-par": () => post("/v1/run_code", parallel),
} as const;
type Variant = keyof typeof variants;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

const samples: Record<Variant, number[]> = { proposals: [], "run-seq": [], "run-par": [] };
const names = Object.keys(variants) as Variant[];
try {
  for (let i = 0; i < warmup; i++) for (const name of names) await variants[name]();
  // Interleaved, so that the machine's load weighs on every variant alike.
  for (let i = 0; i < iterations; i++) {
    for (const name of names) {
      const started = performance.now();
      await variants[name]();
      samples[name].push(performance.now() - started);
    }
  }
} finally {
  await running.close();
  await rm(dir, { recursive: true, force: true });
}

const results = Object.fromEntries(
  names.map((name) => {
    const sorted = [...samples[name]].sort((a, b) => a - b);
    return [
      name,
      {
        median_ms: quantile(sorted, 0.5),
        p95_ms: quantile(sorted, 0.95),
        per_call_ms: quantile(sorted, 0.5) / CALLS,
      },
    ];
  }),
) as Record<Variant, { median_ms: number; p95_ms: number; per_call_ms: number }>;
const ratio = (name: Variant) => results[name].median_ms / results.proposals.median_ms;

console.log(
  `Code Mode: ${CALLS} reads, ${iterations} iterations after ${warmup} warm-up (median, p95 of each variant)`,
);
for (const name of names) {
  const r = results[name];
  console.log(
    `  ${name.padEnd(10)} ${r.median_ms.toFixed(1).padStart(8)} ms  p95 ${r.p95_ms.toFixed(1).padStart(8)} ms  ${r.per_call_ms.toFixed(2).padStart(7)} ms/call  ${ratio(name).toFixed(2)}× proposals`,
  );
}
if (cli.values.json !== undefined) {
  const summary = {
    machine: await machineInfo(root),
    config: { calls: CALLS, iterations, warmup },
    results,
    ratio: { "run-seq": ratio("run-seq"), "run-par": ratio("run-par") },
  };
  await writeFile(cli.values.json, `${JSON.stringify(summary, null, 2)}\n`);
}
