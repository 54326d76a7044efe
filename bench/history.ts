/**
 * History facts' cost (issue 33): decisions per second with five facts configured against none,
 * on a decision log of 1,000,000 entries (goal: ≥ 0.9×).
 *
 * The log is built first, fast, in this process: the store's migrations (`SqliteStore.open`), then
 * ENTRIES entries in one SQL statement (a recursive CTE over one entry made by the store's own
 * `entryText`, each with its own id and a time within the last hour; their hashes are random, so
 * the chain does not verify: this measures decisions, not verification), and the facts' buckets:
 * a full window of buckets for each of the benched call's keys (the worst case a read meets) and
 * 200,000 buckets of other keys. Appending a million entries through `appendDecisions` (chained
 * and hashed one by one) ran at about 730 entries a second on the loaded machine this was
 * written on, so it is not how the log is built.
 *
 * Then the same file is served by a gateway without facts and by one with the five, in turn
 * (`--rounds` times each, alternating; the median and the best run of each are compared), and each run decides the same proposal in process
 * (`handleProposal`, without HTTP: the decision's cost, stages 1–8 with the durable entry)
 * from `--concurrency` loops for `--seconds`. The benched call is a repo.read with a session,
 * which all five facts apply to (each read from the store before the policy runs) and which
 * counts in three of them (written with its entry).
 *
 * Run: npx tsx bench/history.ts [--entries 1000000] [--seconds 10] [--concurrency 16] [--rounds 3]
 *   --dir <dir>    keep the log in <dir> (built there when it has none, reused when it has one:
 *                  the build takes most of a minute); without it, a temporary folder, removed
 *   --only <name>  run one configuration only (`none` or `five`), e.g. under `node --cpu-prof`
 *                  (which profiles the main thread and the store's writer thread):
 *                  node --cpu-prof --cpu-prof-dir=prof --import tsx bench/history.ts --dir d --only five
 *   --profile <dir> the main thread's CPU profile of each measured run (not the warm-up), one
 *                  file a run in <dir>, with its summary (bench/lib/profile.ts)
 *   --slices <n>   instead of rounds: both gateways open at once, n pairs of short runs
 *                  (--slice-seconds each, 1 by default), each pair's order alternating, and
 *                  the ratio of each pair: on a machine whose other load comes and goes, pairs
 *                  a second apart see about the same load, rounds a minute apart do not; also
 *                  each pair's ratio of the process's CPU time a decision (none's / five's),
 *                  which the machine's other load sways less than the rate
 *   --json <file>  with --slices: the medians (five/none by rate and by CPU) and both rates, as
 *                  JSON (`{ratio, cpu, five, none}`: what bench/ab.ts --bench history compares)
 */
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { jsonDigest } from "../src/core/digest.ts";
import type { CanonicalAction } from "../src/core/types.ts";
import { History, type HistoryConfig, historyConfigSchema } from "../src/history/index.ts";
import { handleProposal } from "../src/pipeline/index.ts";
import { startGateway } from "../src/server.ts";
import { entryText } from "../src/store/chain.ts";
import { SqliteStore } from "../src/store/index.ts";
import { BENCH_READ_ARGS, benchEntry } from "./lib/decision-entry.ts";
import { aliceToken, localGatewayConfig } from "./lib/local-gateway.ts";
import { printProfileSummary, profileDuring, projectRootUrl, summarizeProfile } from "./lib/profile.ts";

const { values: flags } = parseArgs({
  options: {
    entries: { type: "string", default: "1000000" },
    seconds: { type: "string", default: "10" },
    concurrency: { type: "string", default: "16" },
    rounds: { type: "string", default: "3" },
    dir: { type: "string" },
    only: { type: "string" },
    profile: { type: "string" },
    slices: { type: "string" },
    "slice-seconds": { type: "string", default: "1" },
    json: { type: "string" },
  },
});
const ENTRIES = Number(flags.entries);
const SECONDS = Number(flags.seconds);
const CONCURRENCY = Number(flags.concurrency);
const ROUNDS = Number(flags.rounds);
const SESSION = "bench-session";
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
let profiles = 0;

const FIVE_FACTS: HistoryConfig = historyConfigSchema.parse([
  {
    name: "reads_of_path",
    match: { tools: ["repo.read"], decision: ["allow"] },
    per: ["session", "args.workspace", "args.path"],
    window_s: 3600,
  },
  { name: "session_calls", per: ["session"], window_s: 3600 },
  { name: "subject_reads_today", match: { tools: ["repo.read"] }, per: ["subject"], window_s: 86_400 },
  { name: "workspace_edits", match: { tools: ["repo.propose_edit"] }, per: ["resource"], window_s: 3600 },
  {
    name: "refunded_today",
    match: { tools: ["commit_payment"], executed: true },
    per: ["subject"],
    window_s: 86_400,
    sum: "args.amount",
  },
]);

const READ: CanonicalAction = {
  name: "repo.read",
  version: "1",
  side_effect: "none",
  idempotency: "natural",
  data_classification: "internal",
  args: BENCH_READ_ARGS,
  args_digest: jsonDigest(BENCH_READ_ARGS),
};

if (flags.only !== undefined && flags.only !== "none" && flags.only !== "five")
  throw new Error(`--only takes none or five, not ${flags.only}`);
const dir = flags.dir ?? (await mkdtemp(path.join(tmpdir(), "writ-bench-history-")));
const file = path.join(dir, "writ.db");
try {
  console.log(
    `machine load (uptime): ${loadavg()
      .map((n) => n.toFixed(2))
      .join(", ")} on the last 1, 5, 15 min`,
  );
  if (flags.dir !== undefined && existsSync(file)) console.log(`log: reusing ${file}`);
  else {
    await mkdir(dir, { recursive: true });
    await fillLog();
  }
  if (flags.slices !== undefined) await interleaved(Number(flags.slices), Number(flags["slice-seconds"]));
  const rounds: { label: string; rate: number }[] = [];
  for (let round = 0; flags.slices === undefined && round < ROUNDS; round++) {
    const configs = (
      [
        ["none", []],
        ["five facts", FIVE_FACTS],
      ] as [string, HistoryConfig][]
    ).filter(([label]) => flags.only === undefined || label.startsWith(flags.only));
    for (const [label, history] of configs) {
      const { rate, cpu } = await measure(history);
      rounds.push({ label, rate });
      console.log(`  ${label.padEnd(10)} ${rate.toFixed(0)} decisions/s, ${cpu}`);
    }
  }
  // The median of each configuration's runs, and the best (the run least disturbed by the machine).
  const rates = (label: string) =>
    rounds
      .filter((r) => r.label === label)
      .map((r) => r.rate)
      .sort((a, b) => a - b);
  const median = (values: number[]) => values[Math.floor(values.length / 2)] ?? 0;
  const best = (values: number[]) => values.at(-1) ?? 0;
  if (flags.only === undefined && flags.slices === undefined) {
    // Each round's own ratio (its two runs were next to each other, under about the same load).
    const paired = pairedRatios(rounds);
    console.log(
      `per round: ${paired.map((r) => `${r.toFixed(3)}×`).join(", ")} (min ${Math.min(...paired).toFixed(3)}×, max ${Math.max(...paired).toFixed(3)}×)`,
    );
    for (const [name, pick] of [
      ["median", median],
      ["best", best],
    ] as const) {
      const facts = pick(rates("five facts"));
      const none = pick(rates("none"));
      const ratio = facts / none;
      console.log(
        `${name}: five facts / none = ${ratio.toFixed(3)}× (${facts.toFixed(0)} / ${none.toFixed(0)} decisions/s) — ${ratio >= 0.9 ? "PASS" : "FAIL"} (goal ≥ 0.9×)`,
      );
    }
  }
  console.log(
    `machine load at the end: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(", ")}`,
  );
} finally {
  if (flags.dir === undefined) await rm(dir, { recursive: true, force: true });
}

/** Five facts / none of each round, in order. */
function pairedRatios(rounds: readonly { label: string; rate: number }[]): number[] {
  const ratios: number[] = [];
  for (let i = 0; i + 1 < rounds.length; i += 2) {
    const none = rounds[i]?.rate ?? Number.NaN;
    ratios.push((rounds[i + 1]?.rate ?? Number.NaN) / none);
  }
  return ratios;
}

/**
 * Builds the log: ENTRIES entries from one template in one SQL statement (a recursive CTE), each
 * with its own id and a time within the last hour, and the facts' buckets: a full window of
 * buckets for each of the benched call's keys (the worst case a read meets) and 200,000 buckets
 * of other keys.
 */
async function fillLog(): Promise<void> {
  const started = performance.now();
  await (await SqliteStore.open(file)).close();
  const db = new Database(file);
  const now = Date.now();
  try {
    db.pragma("synchronous = OFF");
    const template = entryText(benchEntry(now, { session: SESSION }));
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO decisions (seq, entry, prev_hash, hash)
       SELECT i, json_set(?, '$.decision_id', printf('bench-%08d', i),
         '$.timestamp', strftime('%Y-%m-%dT%H:%M:%fZ', (? - 3600000 + i * 3600000 / ?) / 1000.0, 'unixepoch')),
         lower(hex(randomblob(32))), lower(hex(randomblob(32))) FROM n`,
    ).run(ENTRIES, template, now, ENTRIES);
    const facts = new History(FIVE_FACTS).applicable(benchedCall(SESSION));
    const bucket = db.prepare(
      `INSERT INTO history_buckets (fact, key_hash, bucket, count, total, last_at, last_decision, expires_at)
       VALUES (?, ?, ?, 100, 0, ?, 'bench', ?)`,
    );
    db.transaction(() => {
      for (const { fact, key } of facts) {
        const size = fact.bucketS * 1000;
        for (let b = Math.floor((now - fact.windowS * 1000) / size) * size; b <= now; b += size)
          bucket.run(fact.id, key, b, b, b + size + fact.windowS * 1000);
      }
    })();
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
       INSERT INTO history_buckets (fact, key_hash, bucket, count, total, last_at, last_decision, expires_at)
       SELECT ?, lower(hex(randomblob(32))), ? - (i % 60) * 60000, 1, 0, ?, 'bench', ? + 3600000 FROM n`,
    ).run(facts[0]?.fact.id ?? "none", now, now, now);
  } finally {
    db.close();
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`log: ${ENTRIES} entries and the facts' buckets written in ${seconds.toFixed(1)} s`);
}

function benchedCall(session: string) {
  return {
    subject: { id: "alice", tenant: "demo" },
    action: READ,
    session,
    resource: { type: "workspace", id: "ws-demo" },
  };
}

/** A gateway on the log with `history` configured, and its benched proposal (checked allowed). */
async function benchedGateway(history: HistoryConfig) {
  const config = await localGatewayConfig(dir, { overrides: { history } });
  const running = await startGateway(config);
  try {
    const authorization = `Bearer ${await aliceToken(dir)}`;
    const request = () =>
      handleProposal(running.gateway, {
        authorization,
        format: "canonical",
        payload: { tool: "repo.read", arguments: READ.args },
        session: SESSION,
        execute: false,
        requestId: randomUUID(),
      });
    const [probe] = await request();
    if (probe?.decision !== "allow")
      throw new Error(`the benched call was not allowed: ${JSON.stringify(probe)}`);
    return { request, close: () => running.close() };
  } catch (error) {
    await running.close();
    throw error;
  }
}

/**
 * Decisions per second of one gateway on the log, with `history` configured, and the CPU time a
 * decision took (the whole process's, and its main thread's), which the machine's other load
 * does not inflate as it does the rate.
 */
async function measure(history: HistoryConfig): Promise<{ rate: number; cpu: string }> {
  const { request, close } = await benchedGateway(history);
  try {
    // Warm-up (uncounted), then the measured run.
    await runFor(request, 2);
    const process0 = process.cpuUsage();
    const main0 = mainThreadCpuUs();
    const decided = await profiled(history, () => runFor(request, SECONDS));
    const processUs = process.cpuUsage(process0);
    const mainUs = mainThreadCpuUs() - main0;
    const perDecision = (us: number) => (us / decided).toFixed(0);
    const cpu = `${perDecision(processUs.user + processUs.system)} µs CPU a decision (main thread ${Number.isNaN(mainUs) ? "?" : perDecision(mainUs)})`;
    return { rate: decided / SECONDS, cpu };
  } finally {
    await close();
  }
}

/** `--slices`: both gateways open, `pairs` pairs of `seconds`-long runs, each pair's ratio. */
async function interleaved(pairs: number, seconds: number): Promise<void> {
  const none = await benchedGateway([]);
  const five = await benchedGateway(FIVE_FACTS);
  try {
    await runFor(none.request, 2);
    await runFor(five.request, 2);
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    const totals = { none: 0, five: 0, noneUs: 0, fiveUs: 0 };
    for (let i = 0; i < pairs; i++) {
      const first = i % 2 === 0 ? "none" : "five";
      const a = await cpuOf(() => runFor((first === "none" ? none : five).request, seconds));
      const b = await cpuOf(() => runFor((first === "none" ? five : none).request, seconds));
      const [noneRun, fiveRun] = first === "none" ? [a, b] : [b, a];
      totals.none += noneRun.decided;
      totals.five += fiveRun.decided;
      totals.noneUs += noneRun.us;
      totals.fiveUs += fiveRun.us;
      ratios.push(fiveRun.decided / noneRun.decided);
      cpuRatios.push(noneRun.us / noneRun.decided / (fiveRun.us / fiveRun.decided));
    }
    const q = quartiles(ratios);
    console.log(
      `${pairs} pairs of ${seconds} s: five facts / none median ${q.median.toFixed(3)}× (quartiles ${q.low.toFixed(3)}–${q.high.toFixed(3)}, min ${q.min.toFixed(3)}, max ${q.max.toFixed(3)}); in all ${(totals.five / totals.none).toFixed(3)}× (${(totals.five / (pairs * seconds)).toFixed(0)} / ${(totals.none / (pairs * seconds)).toFixed(0)} decisions/s) — ${q.median >= 0.9 ? "PASS" : "FAIL"} (goal ≥ 0.9×)`,
    );
    // The process's CPU time a decision (main and writer threads), which the machine's other load
    // sways less than the rate: none's / five's is the rate ratio of a machine the bench had alone.
    const c = quartiles(cpuRatios);
    console.log(
      `CPU a decision: none / five facts median ${c.median.toFixed(3)}× (quartiles ${c.low.toFixed(3)}–${c.high.toFixed(3)}); in all ${(totals.noneUs / totals.none).toFixed(0)} / ${(totals.fiveUs / totals.five).toFixed(0)} µs`,
    );
    if (flags.json !== undefined) {
      const rate = (decided: number) => decided / (pairs * seconds);
      const summary = { ratio: q.median, cpu: c.median, five: rate(totals.five), none: rate(totals.none) };
      await writeFile(flags.json, `${JSON.stringify(summary)}\n`);
    }
  } finally {
    await five.close();
    await none.close();
  }
}

/** The process's CPU time (user and system, µs) that `run` took, and what it decided. */
async function cpuOf(run: () => Promise<number>): Promise<{ decided: number; us: number }> {
  const before = process.cpuUsage();
  const decided = await run();
  const used = process.cpuUsage(before);
  return { decided, us: used.user + used.system };
}

/** The median, quartiles and extremes of `values`. */
function quartiles(values: readonly number[]) {
  const sorted = [...values].sort((x, y) => x - y);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { median: at(0.5), low: at(0.25), high: at(0.75), min: at(0), max: at(1) };
}

/** Runs `phase`, under the CPU profiler with `--profile` (its summary printed). */
async function profiled(history: HistoryConfig, phase: () => Promise<number>): Promise<number> {
  if (flags.profile === undefined) return phase();
  await mkdir(flags.profile, { recursive: true });
  const name = `${history.length === 0 ? "none" : "five"}-${++profiles}.cpuprofile`;
  const { result, profile } = await profileDuring(path.join(flags.profile, name), phase);
  console.log(`profile ${name}:`);
  printProfileSummary(summarizeProfile(profile, { root: projectRootUrl(root), top: 25 }), { byFile: true });
  return result;
}

/** This thread's CPU time in µs (Linux: /proc/thread-self/stat, in clock ticks); NaN elsewhere. */
function mainThreadCpuUs(): number {
  try {
    const fields = readFileSync("/proc/thread-self/stat", "utf8").split(") ")[1]?.split(" ") ?? [];
    // utime and stime are the 14th and 15th fields; the 3rd (state) is the first after ") ".
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
  } catch {
    return Number.NaN;
  }
}

async function runFor(request: () => Promise<unknown>, seconds: number): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let decided = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        await request();
        decided++;
      }
    }),
  );
  return decided;
}
