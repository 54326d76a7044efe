/**
 * The SQLite writer's cost per decision-log entry, and what the decision ids' kind does to it:
 * random version 4 UUIDs (before) against time-ordered version 7 ones (`core/ids.ts`).
 *
 * For each kind, a log of `--entries` entries is built first (one SQL statement, ids of that kind,
 * in the order they would have been made; hashes random: this measures writes, not the chain),
 * then entries are appended as the writer thread appends them (`appendEachDecision`, the store's
 * own procedure, in groups of `--group` in one transaction, `synchronous = FULL`), on this thread,
 * and the CPU time of this thread (user and system, from /proc/thread-self/stat: Linux only) is
 * divided by the entries appended. The kinds alternate, `--rounds` times each; CPU time, unlike
 * wall time, is not inflated by the machine's other load (much).
 *
 * Run: npx tsx bench/writer.ts [--entries 200000] [--group 16] [--groups 200] [--rounds 5]
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { timeOrderedUuid } from "../src/core/ids.ts";
import { entryText } from "../src/store/chain.ts";
import { SqliteStore } from "../src/store/index.ts";
import { runWrite, SqliteConnection } from "../src/store/sqlite-connection.ts";
import { benchEntry } from "./lib/decision-entry.ts";

const { values: flags } = parseArgs({
  options: {
    entries: { type: "string", default: "200000" },
    group: { type: "string", default: "16" },
    groups: { type: "string", default: "200" },
    rounds: { type: "string", default: "5" },
  },
});
const ENTRIES = Number(flags.entries);
const GROUP = Number(flags.group);
const GROUPS = Number(flags.groups);
const ROUNDS = Number(flags.rounds);

const kinds = {
  "version 4 (random)": () => randomUUID(),
  "version 7 (time-ordered)": () => timeOrderedUuid(),
} as const;
type Kind = keyof typeof kinds;

/** This thread's CPU time so far, in µs (user, system). */
function threadCpu(): { user: number; system: number } {
  const stat = readFileSync("/proc/thread-self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime, in clock ticks (100 a second on Linux).
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
}

/** A log of ENTRIES entries whose ids are of `kind`, made in order (the store's schema). */
async function buildLog(file: string, kind: Kind): Promise<void> {
  await (await SqliteStore.open(file)).close();
  const db = new Database(file);
  try {
    db.pragma("synchronous = OFF");
    const make = kinds[kind];
    const template = entryText(benchEntry(Date.now(), { id: make() }));
    const insert = db.prepare(
      `INSERT INTO decisions (seq, entry, prev_hash, hash)
       VALUES (?, json_set(?, '$.decision_id', ?), lower(hex(randomblob(32))), lower(hex(randomblob(32))))`,
    );
    db.transaction(() => {
      for (let seq = 1; seq <= ENTRIES; seq++) insert.run(seq, template, make());
    })();
  } finally {
    db.close();
  }
}

const dir = await mkdtemp(path.join(tmpdir(), "writ-bench-writer-"));
try {
  const files = new Map<Kind, string>();
  for (const kind of Object.keys(kinds) as Kind[]) {
    const file = path.join(dir, `${files.size}.db`);
    const started = performance.now();
    await buildLog(file, kind);
    files.set(kind, file);
    console.log(
      `log of ${ENTRIES} entries, ids ${kind}: built in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  const results = new Map<Kind, { user: number; system: number }[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [kind, file] of files) {
      const conn = new SqliteConnection(file, { synchronous: "full", busyTimeoutMs: 5000 });
      const make = kinds[kind];
      const groups = Array.from({ length: GROUPS }, () =>
        Array.from({ length: GROUP }, () => entryText(benchEntry(Date.now(), { id: make() }))),
      );
      const before = threadCpu();
      for (const texts of groups) {
        conn.db
          .transaction(() =>
            runWrite(conn, "appendEachDecision", [texts, texts.map(() => undefined), "bench"]),
          )
          .immediate();
      }
      const after = threadCpu();
      conn.close();
      const n = GROUPS * GROUP;
      results.set(kind, [
        ...(results.get(kind) ?? []),
        { user: (after.user - before.user) / n, system: (after.system - before.system) / n },
      ]);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  console.log(
    `\nCPU µs per entry appended (groups of ${GROUP}, synchronous=FULL), median of ${ROUNDS} rounds:`,
  );
  const totals = new Map<Kind, number>();
  for (const [kind, runs] of results) {
    const user = median(runs.map((r) => r.user));
    const system = median(runs.map((r) => r.system));
    const total = median(runs.map((r) => r.user + r.system));
    totals.set(kind, total);
    console.log(
      `  ids ${kind.padEnd(26)} user ${user.toFixed(0).padStart(4)}  system ${system.toFixed(0).padStart(4)}  total ${total.toFixed(0).padStart(4)}   (totals: ${runs.map((r) => (r.user + r.system).toFixed(0)).join(", ")})`,
    );
  }
  const [v4, v7] = [...totals.values()];
  if (v4 !== undefined && v7 !== undefined) console.log(`  version 7 / version 4: ${(v7 / v4).toFixed(3)}×`);
  console.log(
    `machine load at the end: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(", ")}`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
