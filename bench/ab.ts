/**
 * A/B of one change to the gateway, on a busy machine: short `bench/gateway.ts` runs, one process
 * each, alternating A (the change off) and B (on) pair after pair, so that the machine's other
 * load falls on both alike. A change under test is switched by an environment variable its code
 * reads while it is measured (none is kept in the code); the load generator runs in worker
 * threads as usual. Run it from a copy of the tree (git archive), not one being edited.
 *
 * Prints per pair and in all (median, with min and max over the pairs) the B/A ratio of:
 * proposals req/s at --at connections, proposals/floor there, and the evenly paced run's p50 and
 * p99 at half load. Every run verifies the decision log (a broken log fails the A/B).
 *
 * With `--bench mcp`, the runs are `bench/mcp.ts`'s (8 clients) and the ratios compared are its
 * own, each run against the direct calls of the same run: writ-mcp/direct and
 * writ-mcp-modern/direct, by throughput and by CPU time per call.
 *
 * With `--bench history`, the runs are `bench/history.ts --slices 20`'s on one log of 1,000,000
 * entries (`--dir`, built by the first run when it has none, in a temporary folder without it;
 * a change that alters the schema needs a log of each side's own): five facts / none, by rate
 * and by CPU time a decision, each the median of its run's pairs of slices.
 *
 * Run: npx tsx bench/ab.ts --a NAME=off --b NAME=on [--pairs 3] [--seconds 3] [--at 32]
 *        [--bench gateway|mcp|history] [--dir <bench/history.ts's log>]
 *   --a / --b   NAME=VALUE environment settings of each side (repeatable)
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { z } from "zod";
import { median } from "./lib/stats.ts";
import { readSummary, type Summary } from "./lib/summary.ts";
import { printTable } from "./lib/table.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const run = promisify(execFile);

const { values: flags } = parseArgs({
  options: {
    a: { type: "string", multiple: true, default: [] },
    b: { type: "string", multiple: true, default: [] },
    pairs: { type: "string", default: "3" },
    seconds: { type: "string", default: "3" },
    at: { type: "string", default: "32" },
    bench: { type: "string", default: "gateway" },
    dir: { type: "string" },
  },
});

function settings(list: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    list.map((item) => {
      const eq = item.indexOf("=");
      if (eq < 1) throw new Error(`expected NAME=VALUE, not ${JSON.stringify(item)}`);
      return [item.slice(0, eq), item.slice(eq + 1)];
    }),
  );
}

const sides = { A: settings(flags.a), B: settings(flags.b) };
const pairs = Number(flags.pairs);
const at = flags.at;

/** The numbers compared, read out of one `bench/gateway.ts` run's summary. */
function gatewayNumbers(summary: Summary): Record<string, number> {
  const row = (name: string) => summary.rows.find((r) => r.name === name)?.metrics ?? {};
  return {
    rps: row(`proposals @${at}`).rps ?? Number.NaN,
    floor: row(`proposals/floor @${at}`).ratio ?? Number.NaN,
    p50: row(`proposals evenly paced @${at}`).p50 ?? Number.NaN,
    p99: row(`proposals evenly paced @${at}`).p99 ?? Number.NaN,
  };
}

/** The ratios of one `bench/mcp.ts` run (its `--json`). */
async function mcpNumbers(file: string): Promise<Record<string, number>> {
  const { ratios } = z
    .object({ ratios: z.record(z.string(), z.number()) })
    .parse(JSON.parse(await readFile(file, "utf8")));
  return {
    mcp: ratios["writ-mcp/direct"] ?? Number.NaN,
    modern: ratios["writ-mcp-modern/direct"] ?? Number.NaN,
    "mcp cpu": ratios["writ-mcp/direct (cpu)"] ?? Number.NaN,
    "modern cpu": ratios["writ-mcp-modern/direct (cpu)"] ?? Number.NaN,
  };
}

/** What an A/B runs: the bench's arguments (writing its JSON to `file`), the numbers read back, their columns. */
interface Compared {
  what: string;
  args: (file: string) => string[];
  read: (file: string, side: "A" | "B") => Promise<Record<string, number>>;
  keys: string[];
  columns: string[];
}

const compared: Record<string, Compared> = {
  gateway: {
    what: `${flags.seconds} s runs at ${at}`,
    args: (file) => ["bench/gateway.ts", flags.seconds, at, "--at", at, "--json", file],
    read: async (file, side) => {
      const summary = await readSummary(file);
      if (summary.notes.decisionLogIntact !== true)
        throw new Error(`side ${side}: the decision log is broken`);
      return gatewayNumbers(summary);
    },
    keys: ["rps", "floor", "p50", "p99"],
    columns: [`req/s @${at}`, "/floor", "p50 half", "p99 half"],
  },
  mcp: {
    what: `${flags.seconds} s runs of bench/mcp.ts`,
    args: (file) => ["bench/mcp.ts", flags.seconds, "8", "--warmup", "1", "--json", file],
    read: mcpNumbers,
    keys: ["mcp", "modern", "mcp cpu", "modern cpu"],
    columns: ["mcp/direct", "modern/direct", "mcp/direct cpu", "modern/direct cpu"],
  },
  history: {
    what: "runs of bench/history.ts --slices 20",
    args: (file) => [
      "bench/history.ts",
      "--dir",
      flags.dir ?? path.join(dir, "history-log"),
      "--slices",
      "20",
      "--json",
      file,
    ],
    read: async (file) =>
      z.object({ ratio: z.number(), cpu: z.number() }).parse(JSON.parse(await readFile(file, "utf8"))),
    keys: ["ratio", "cpu"],
    columns: ["five/none", "five/none cpu"],
  },
};
const chosen = compared[flags.bench];
if (chosen === undefined)
  throw new Error(`--bench is ${Object.keys(compared).join(", ")}, not ${flags.bench}`);
const bench: Compared = chosen;

async function once(side: "A" | "B", file: string): Promise<Record<string, number>> {
  const env = { ...process.env, ...sides[side] };
  await run("npx", ["tsx", ...bench.args(file)], { cwd: root, env, maxBuffer: 1 << 24 });
  return bench.read(file, side);
}

const dir = await mkdtemp(path.join(tmpdir(), "writ-ab-"));
const { keys } = bench;
const ratios: Record<string, number[]> = Object.fromEntries(keys.map((key) => [key, []]));
const rows: Array<Array<string | number>> = [];
try {
  for (let i = 1; i <= pairs; i++) {
    const load = loadavg()[0]?.toFixed(2) ?? "?";
    const a = await once("A", path.join(dir, `a${i}.json`));
    const b = await once("B", path.join(dir, `b${i}.json`));
    for (const key of keys) ratios[key]?.push((b[key] ?? Number.NaN) / (a[key] ?? Number.NaN));
    for (const [side, n] of [
      ["A", a],
      ["B", b],
    ] as const) {
      rows.push([`${i} ${side}`, load, ...keys.map((k) => Number((n[k] ?? Number.NaN).toFixed(3)))]);
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

console.log(`A: ${JSON.stringify(sides.A)}  B: ${JSON.stringify(sides.B)}  ${bench.what}`);
printTable(rows, ["run", "load avg", ...bench.columns]);
console.log("");
printTable(
  keys.map((key) => {
    const values = ratios[key] ?? [];
    return [
      `B/A ${key}`,
      `${median(values).toFixed(3)}x`,
      `${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)}`,
    ];
  }),
  ["ratio", "median", "min–max"],
);
console.log(
  `load average at the end: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
