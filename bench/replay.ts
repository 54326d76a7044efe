/**
 * Replay throughput: `writ policy replay`'s engine (src/replay/) over a decision log of 100,000
 * entries in a real SQLite file, against the sample policy (nothing changes) and a tightened copy
 * (searches closed: the allowed searches change). Prints decisions replayed per second and the
 * share of the time spent reading the log (pages from the store, parsed) and evaluating the
 * candidate (opa-wasm), the rest being the comparison and the iteration.
 *
 * The log is written quickly: realistic inputs for the sample policy's tools, decided by the
 * sample policy and redacted as the log redacts them, appended straight through the store in
 * batches (test/support/replay-log.ts), timestamps over a week.
 *
 * Run: npx tsx bench/replay.ts [--entries 100000] [--page-size 500] [--json]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { z } from "zod";
import { compiledCacheBeside } from "../src/policy/compiled-cache.ts";
import { PolicyEngine } from "../src/policy/index.ts";
import { loadCandidate, Replay } from "../src/replay/index.ts";
import { SqliteStore } from "../src/store/index.ts";
import { samplePolicy, tightenedSample, writeReplayLog } from "../test/support/replay-log.ts";
import { busyMachineWarning, describeMachine, machineInfo } from "./lib/machine.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DAY = 24 * 60 * 60 * 1000;

const { values } = parseArgs({
  options: {
    entries: { type: "string", default: "100000" },
    "page-size": { type: "string", default: "500" },
    json: { type: "boolean", default: false },
  },
});
const entries = z.coerce.number().int().positive().parse(values.entries);
const pageSize = z.coerce.number().int().min(1).max(500).parse(values["page-size"]);

interface Run {
  candidate: string;
  compile_ms: number;
  replayed: number;
  changed: number;
  inexact: number;
  seconds: number;
  decisions_per_s: number;
  read_share: number;
  eval_share: number;
}

const machine = await machineInfo(root);
const tmp = await mkdtemp(path.join(tmpdir(), "writ-bench-replay-"));
const file = path.join(tmp, "writ.db");
// Generation only: the replay reads, and no acknowledged entry needs to survive a power cut.
const store = await SqliteStore.open(file, { synchronous: "normal" });
try {
  const cache = compiledCacheBeside(file);
  const live = new PolicyEngine({ compiledCache: cache });
  await live.loadDirectory(samplePolicy);
  const writeStarted = performance.now();
  await writeReplayLog(store, live, {
    entries,
    from: new Date(Date.now() - 7 * DAY),
    spanMs: 7 * DAY,
    batch: 1000,
  });
  const writeSeconds = (performance.now() - writeStarted) / 1000;
  const tight = await tightenedSample(path.join(tmp, "tight"));

  const runs: Run[] = [];
  for (const [name, source] of [
    ["sample (unchanged)", samplePolicy],
    ["tightened (searches closed)", tight],
  ] as const) {
    const compileStarted = performance.now();
    const candidate = await loadCandidate(source, { entrypoint: live.entrypoint, compiledCache: cache });
    const compile_ms = performance.now() - compileStarted;
    const replay = new Replay(store, candidate, { pageSize });
    const started = performance.now();
    let changed = 0;
    for await (const result of replay)
      if (result.kind === "replayed" && result.changed && result.exact) changed++;
    const ms = performance.now() - started;
    const s = replay.summary;
    runs.push({
      candidate: name,
      compile_ms: Math.round(compile_ms),
      replayed: s.considered,
      changed,
      inexact: s.inexact.count,
      seconds: Math.round(ms) / 1000,
      decisions_per_s: Math.round(s.considered / (ms / 1000)),
      read_share: Math.round((s.read_ms / ms) * 1000) / 1000,
      eval_share: Math.round((s.eval_ms / ms) * 1000) / 1000,
    });
  }

  if (values.json) {
    console.log(
      JSON.stringify({ machine, entries, page_size: pageSize, write_seconds: writeSeconds, runs }, null, 2),
    );
  } else {
    console.log(describeMachine(machine));
    const warning = busyMachineWarning(machine);
    if (warning) console.log(warning);
    console.log(
      `log: ${entries} entries written in ${writeSeconds.toFixed(1)} s (${Math.round(entries / writeSeconds)}/s), pages of ${pageSize}`,
    );
    console.log(
      "candidate                      replayed  changed  inexact  seconds  decisions/s  read  evaluate",
    );
    for (const r of runs) {
      console.log(
        `${r.candidate.padEnd(31)}${String(r.replayed).padStart(8)} ${String(r.changed).padStart(8)} ${String(r.inexact).padStart(8)} ${r.seconds.toFixed(1).padStart(8)} ${String(r.decisions_per_s).padStart(12)} ${`${Math.round(r.read_share * 100)}%`.padStart(5)} ${`${Math.round(r.eval_share * 100)}%`.padStart(9)}`,
      );
    }
  }
} finally {
  await store.close();
  await rm(tmp, { recursive: true, force: true });
}
