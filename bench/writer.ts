/**
 * The SQLite writer's cost per decision-log entry, and what the decision ids' kind does to it:
 * random version 4 UUIDs (before) against time-ordered version 7 ones (`core/ids.ts`); or, with
 * `--compare history`, what recording five history facts' values in the entry does to it (issue
 * 33: the entry holds the policy input, `input.context.history` included): the entries of
 * bench/history.ts's benched call without facts and with the five, as a gateway logged them
 * (the latest of each kind in the log `--from`, which bench/history.ts --dir built and ran on),
 * or else `benchEntry`'s without and with the five facts' values.
 *
 * For each kind, a log of `--entries` entries is built first (one SQL statement, ids of that kind,
 * in the order they would have been made; hashes random: this measures writes, not the chain),
 * then entries are appended as the writer thread appends them (`appendEachDecision`, the store's
 * own procedure, in groups of `--group` in one transaction, `synchronous = FULL`), on this thread,
 * and the CPU time of this thread (user and system, from /proc/thread-self/stat: Linux only) is
 * divided by the entries appended. The kinds alternate, `--rounds` times each; CPU time, unlike
 * wall time, is not inflated by the machine's other load (much).
 *
 * Each kind's wall time per entry is reported too: the commit's wait for the disk is in it, and
 * the writer thread spends it.
 *
 * Run: npx tsx bench/writer.ts [--entries 200000] [--group 16] [--groups 200] [--rounds 5]
 *        [--compare ids|history] [--from <bench/history.ts's writ.db>]
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { z } from "zod";
import { timeOrderedUuid } from "../src/core/ids.ts";
import type { HistoryValue } from "../src/core/types.ts";
import { entryText } from "../src/store/chain.ts";
import { SqliteStore } from "../src/store/index.ts";
import { runWrite, SqliteConnection } from "../src/store/sqlite-connection.ts";
import { benchEntry } from "./lib/decision-entry.ts";
import { median } from "./lib/stats.ts";

const { values: flags } = parseArgs({
  options: {
    entries: { type: "string", default: "200000" },
    group: { type: "string", default: "16" },
    groups: { type: "string", default: "200" },
    rounds: { type: "string", default: "5" },
    compare: { type: "string", default: "ids" },
    from: { type: "string" },
  },
});
const ENTRIES = Number(flags.entries);
const GROUP = Number(flags.group);
const GROUPS = Number(flags.groups);
const ROUNDS = Number(flags.rounds);

const SESSION = "bench-session";

/** A kind of entry: how its ids are made, and its text (`entryText`) with an id. */
interface Kind {
  id: () => string;
  text: (id: string, at: number) => string;
}

/** `benchEntry`'s text; with `session`, in that session, and with `history`, those values in its input. */
const benchText =
  (options: { session?: string; history?: Record<string, HistoryValue> } = {}) =>
  (id: string, at: number) => {
    const entry = benchEntry(at, {
      id,
      ...(options.session === undefined ? {} : { session: options.session }),
    });
    if (options.history === undefined) return entryText(entry);
    const input = z
      .object({ context: z.record(z.string(), z.unknown()) })
      .loose()
      .parse(entry.input);
    return entryText({
      ...entry,
      input: { ...input, context: { ...input.context, history: options.history } },
    });
  };

/** The values the five facts of bench/history.ts give its benched call (the sizes they log). */
const FIVE_VALUES: Record<string, HistoryValue> = Object.fromEntries(
  ["reads_of_path", "session_calls", "subject_reads_today", "workspace_edits", "refunded_today"].map(
    (name, i) => [
      name,
      {
        count: 500_000 + i,
        ...(name === "refunded_today" ? { sum: 0 } : {}),
        last: { time_ns: 1_796_282_144_529_000_000, decision_id: timeOrderedUuid() },
      },
    ],
  ),
);

/**
 * The latest entry's text in the log at `file` with (or without) `input.context.history`, with
 * an id and time of its own; `withoutLast`: the history values' `last` left out.
 */
function loggedText(
  file: string,
  withHistory: boolean,
  withoutLast = false,
): (id: string, at: number) => string {
  const db = new Database(file, { readonly: true });
  try {
    const row = db
      .prepare(
        `SELECT entry FROM decisions WHERE json_extract(entry, '$.path') = 'writ/decision'
           AND (json_extract(entry, '$.input.context.history') IS NOT NULL) = ?
           AND json_extract(entry, '$.decision_id') NOT LIKE 'bench-%' ORDER BY seq DESC LIMIT 1`,
      )
      .pluck()
      .get(withHistory ? 1 : 0);
    if (typeof row !== "string") {
      throw new Error(
        `${file} has no gateway entry ${withHistory ? "with" : "without"} history values: run bench/history.ts --dir on it first`,
      );
    }
    const entry = loggedEntrySchema.parse(JSON.parse(row));
    const history = entry.input.context.history;
    const input =
      withoutLast && history !== undefined
        ? { ...entry.input, context: { ...entry.input.context, history: lastLeftOut(history) } }
        : entry.input;
    return (id, at) =>
      JSON.stringify({ ...entry, input, decision_id: id, timestamp: new Date(at).toISOString() });
  } finally {
    db.close();
  }
}

/** History values without their `last`. */
function lastLeftOut<T extends { last?: unknown }>(
  values: Record<string, T>,
): Record<string, Omit<T, "last">> {
  return Object.fromEntries(Object.entries(values).map(([name, { last: _, ...rest }]) => [name, rest]));
}

const loggedEntrySchema = z
  .object({
    decision_id: z.string(),
    timestamp: z.string(),
    input: z
      .object({
        context: z
          .object({ history: z.record(z.string(), z.object({ last: z.unknown() }).loose()).optional() })
          .loose(),
      })
      .loose(),
  })
  .loose();

const comparisons: Record<string, () => Record<string, Kind>> = {
  ids: () => ({
    "version 4 (random)": { id: () => randomUUID(), text: benchText() },
    "version 7 (time-ordered)": { id: () => timeOrderedUuid(), text: benchText() },
  }),
  history: () => ({
    "no history facts": {
      id: () => timeOrderedUuid(),
      text: flags.from === undefined ? benchText({ session: SESSION }) : loggedText(flags.from, false),
    },
    "five facts' values": {
      id: () => timeOrderedUuid(),
      text:
        flags.from === undefined
          ? benchText({ session: SESSION, history: FIVE_VALUES })
          : loggedText(flags.from, true),
    },
    "five, without last": {
      id: () => timeOrderedUuid(),
      text:
        flags.from === undefined
          ? benchText({ session: SESSION, history: lastLeftOut(FIVE_VALUES) })
          : loggedText(flags.from, true, true),
    },
  }),
};
const compare = comparisons[flags.compare];
if (compare === undefined) throw new Error(`--compare takes ${Object.keys(comparisons).join(" or ")}`);
const kinds = compare();

/** This thread's CPU time so far, in µs (user, system). */
function threadCpu(): { user: number; system: number } {
  const stat = readFileSync("/proc/thread-self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime, in clock ticks (100 a second on Linux).
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
}

/** A log of ENTRIES entries of `kind`, made in order (the store's schema). */
async function buildLog(file: string, kind: Kind): Promise<void> {
  await (await SqliteStore.open(file)).close();
  const db = new Database(file);
  try {
    db.pragma("synchronous = OFF");
    const template = kind.text(kind.id(), Date.now());
    const insert = db.prepare(
      `INSERT INTO decisions (seq, entry, prev_hash, hash)
       VALUES (?, json_set(?, '$.decision_id', ?), lower(hex(randomblob(32))), lower(hex(randomblob(32))))`,
    );
    db.transaction(() => {
      for (let seq = 1; seq <= ENTRIES; seq++) insert.run(seq, template, kind.id());
    })();
  } finally {
    db.close();
  }
}

interface Run {
  user: number;
  system: number;
  wall: number;
}

const dir = await mkdtemp(path.join(tmpdir(), "writ-bench-writer-"));
try {
  const files = new Map<string, string>();
  for (const [name, kind] of Object.entries(kinds)) {
    const file = path.join(dir, `${files.size}.db`);
    const started = performance.now();
    await buildLog(file, kind);
    files.set(name, file);
    console.log(
      `log of ${ENTRIES} entries, ${name} (${kind.text(kind.id(), Date.now()).length} bytes an entry): built in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  const results = new Map<string, Run[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, file] of files) {
      const kind = kinds[name];
      if (kind === undefined) continue;
      const conn = new SqliteConnection(file, { synchronous: "full", busyTimeoutMs: 5000 });
      const groups = Array.from({ length: GROUPS }, () =>
        Array.from({ length: GROUP }, () => kind.text(kind.id(), Date.now())),
      );
      const before = threadCpu();
      const started = performance.now();
      for (const texts of groups) {
        conn.db
          .transaction(() =>
            runWrite(conn, "appendEachDecision", [texts, texts.map(() => undefined), "bench"]),
          )
          .immediate();
      }
      const wall = performance.now() - started;
      const after = threadCpu();
      conn.close();
      const n = GROUPS * GROUP;
      results.set(name, [
        ...(results.get(name) ?? []),
        {
          user: (after.user - before.user) / n,
          system: (after.system - before.system) / n,
          wall: (wall * 1000) / n,
        },
      ]);
    }
  }
  console.log(`\nµs per entry appended (groups of ${GROUP}, synchronous=FULL), median of ${ROUNDS} rounds:`);
  const totals: { cpu: number; wall: number }[] = [];
  for (const [name, runs] of results) {
    const cpu = median(runs.map((r) => r.user + r.system));
    const wall = median(runs.map((r) => r.wall));
    totals.push({ cpu, wall });
    console.log(
      `  ${name.padEnd(26)} CPU user ${median(runs.map((r) => r.user))
        .toFixed(0)
        .padStart(4)}  system ${median(runs.map((r) => r.system))
        .toFixed(0)
        .padStart(
          4,
        )}  total ${cpu.toFixed(0).padStart(4)}  wall ${wall.toFixed(0).padStart(4)}   (CPU totals: ${runs.map((r) => (r.user + r.system).toFixed(0)).join(", ")})`,
    );
  }
  const names = [...results.keys()];
  const [first] = totals;
  totals.forEach((other, i) => {
    if (i === 0 || first === undefined) return;
    console.log(
      `  ${names[i]} / ${names[0]}: CPU ${(other.cpu / first.cpu).toFixed(3)}×, wall ${(other.wall / first.wall).toFixed(3)}× (entries a second: ${(first.wall / other.wall).toFixed(3)}×)`,
    );
  });
  console.log(
    `machine load at the end: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(", ")}`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
