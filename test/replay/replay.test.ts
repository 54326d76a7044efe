/**
 * Replay against a week of logged decisions (written through a real SQLite store, decided by the
 * sample policy): a candidate that tightens one rule reports exactly the decisions that rule
 * changes, by id, with counts by transition; `--fail-on-change` exits 1 then and 0 with the same
 * policy; redacted inputs are reported as inexact and an entry without input as not replayable;
 * --since/--until, filters and --limit select the right entries.
 */
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { CommandIo } from "../../src/cli/logs/io.ts";
import { replayCommand } from "../../src/cli/policy/replay.ts";
import { policyCommand } from "../../src/cli/policy.ts";
import { compiledCacheBeside } from "../../src/policy/compiled-cache.ts";
import { archivedRevision, PolicyEngine } from "../../src/policy/index.ts";
import { readDirectorySources } from "../../src/policy/sources.ts";
import { loadCandidate, Replay, type ReplayResult } from "../../src/replay/index.ts";
import { SqliteStore } from "../../src/store/index.ts";
import { writeConfigFile } from "../support/config-file.ts";
import { samplePolicy, tightenedSample, type WrittenEntry, writeReplayLog } from "../support/replay-log.ts";

const DAY = 24 * 60 * 60 * 1000;
const FROM = new Date("2026-11-01T00:00:00.000Z");
const sample = samplePolicy;

let tmp: string;
let store: SqliteStore;
let config: string;
let tight: string;
let written: WrittenEntry[];
const NO_INPUT_ID = "d-no-input";

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "writ-replay-"));
  config = await writeConfigFile(tmp, (d) => ({ ...d, store: { sqlite: path.join(tmp, "writ.db") } }));
  store = await SqliteStore.open(path.join(tmp, "writ.db"));
  // The cache the command keeps beside the store: the sample is compiled once for the file.
  const live = new PolicyEngine({ compiledCache: compiledCacheBeside(path.join(tmp, "writ.db")) });
  await live.loadDirectory(sample);
  written = await writeReplayLog(store, live, { entries: 1400, from: FROM, spanMs: 7 * DAY });
  // An evaluation whose input is missing (as an entry written by hand or a damaged export).
  const [last] = await store.readDecisions(written.length, 1);
  if (last === undefined) throw new Error("the log was not written");
  const { seq: _s, prev_hash: _p, hash: _h, ...copy } = last;
  await store.appendDecision({
    ...copy,
    decision_id: NO_INPUT_ID,
    timestamp: new Date(FROM.getTime() + 7 * DAY + 1000).toISOString(),
    input: null,
    path: "writ/decision",
  });
  tight = await tightenedSample(path.join(tmp, "tight"));
}, 60_000);

afterAll(async () => {
  await store?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const evaluations = () => written.filter((e) => e.path === "writ/decision");
const idsOf = (entries: readonly { decision_id: string }[]) => entries.map((e) => e.decision_id).sort();

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CommandIo = {
    out: (line) => {
      out += `${line}\n`;
    },
    err: (line) => {
      err += `${line}\n`;
    },
    signal: new AbortController().signal,
  };
  const code = await replayCommand(["--config", config, ...argv], io);
  return { code, out, err };
}

const answerSchema = z.object({ decision: z.string(), reasons: z.array(z.object({ code: z.string() })) });
const replayedSchema = z.object({
  decision_id: z.string(),
  before: answerSchema,
  after: answerSchema,
  changed: z.boolean(),
  exact: z.boolean(),
  erased: z.array(z.string()),
  masked: z.array(z.string()),
});
const reportSchema = z.object({
  candidate: z.object({ source: z.string(), revision: z.string() }),
  summary: z.object({
    considered: z.number(),
    exact: z.number(),
    changed: z.number(),
    transitions: z.record(z.string(), z.number()),
    inexact: z.object({ count: z.number(), changed: z.number() }),
    not_replayable: z.number(),
  }),
  changed: z.array(replayedSchema),
  inexact: z.array(replayedSchema),
  not_replayable: z.array(z.object({ decision_id: z.string(), why: z.literal("missing_input") })),
});

describe("replaying a week of decisions", () => {
  it("reports exactly the decisions the tightened rule changes, with counts by transition", async () => {
    const cache = compiledCacheBeside(path.join(tmp, "writ.db"));
    const candidate = await loadCandidate(tight, { entrypoint: "writ/decision", compiledCache: cache });
    const replay = new Replay(store, candidate, { pageSize: 300 });
    const results: ReplayResult[] = [];
    for await (const result of replay) results.push(result);

    // Only alice's own searches were allowed; those the log kept whole change, by id.
    const expected = evaluations().filter((e) => e.action === "repo.search" && e.decision === "allow");
    expect(expected.length).toBeGreaterThan(50);
    const exactChanges = expected.filter((e) => !e.redacted);
    const changed = results.flatMap((r) => (r.kind === "replayed" && r.exact && r.changed ? [r] : []));
    expect(idsOf(changed)).toEqual(idsOf(exactChanges));
    for (const r of changed) {
      expect(r.before.decision).toBe("allow");
      expect(r.after.decision).toBe("deny");
      expect(r.after.reasons.map((x) => x.code)).toEqual(["search_closed"]);
    }

    const s = replay.summary;
    const exact = evaluations().filter((e) => !e.redacted);
    expect(s.considered).toBe(evaluations().length + 1);
    expect(s.exact).toBe(exact.length);
    expect(s.changed).toBe(exactChanges.length);
    expect(s.not_replayable).toBe(1);
    // Every exact replay is counted under its transition; only allow → deny is new.
    const transitions: Record<string, number> = {};
    for (const e of exact) {
      const after = e.action === "repo.search" ? "deny" : e.decision;
      const key = `${e.decision} → ${after}`;
      transitions[key] = (transitions[key] ?? 0) + 1;
    }
    expect(s.transitions).toEqual(transitions);
    expect(Object.keys(s.transitions)).toEqual(
      expect.arrayContaining([
        "allow → deny",
        "allow → allow",
        "deny → deny",
        "require_approval → require_approval",
      ]),
    );
    // Redacted searches (a key in the query was masked) are replayed, but apart, as inexact.
    const redacted = evaluations().filter((e) => e.redacted);
    expect(redacted.length).toBeGreaterThan(0);
    expect(s.inexact.count).toBe(redacted.length);
    expect(s.read_ms).toBeGreaterThan(0);
    expect(s.eval_ms).toBeGreaterThan(0);
    expect(s.inexact.baselined).toBe(0);

    // With the revision that decided them archived, redacted inputs are also run through it: the
    // sample over a masked query allows as it did, so the candidate's denial is the policies' doing.
    const live = await readDirectorySources(sample);
    const liveId = results.find((r) => r.kind === "replayed")?.revision ?? "";
    await store.archivePolicyRevision(archivedRevision({ id: liveId, sources: live }));
    const archived = new Replay(store, candidate, { archive: { store, compiledCache: cache } });
    const inexact: ReplayResult[] = [];
    for await (const r of archived) if (r.kind === "replayed" && !r.exact) inexact.push(r);
    expect(archived.summary.inexact.baselined).toBe(redacted.length);
    for (const r of inexact) {
      if (r.kind !== "replayed") continue;
      expect(r.baseline?.decision).toBe(r.before.decision);
      expect(r.changed).toBe(r.baseline?.decision !== r.after.decision);
    }
    expect(archived.summary.inexact.changed).toBe(
      redacted.filter((e) => e.decision === "allow" && e.action === "repo.search").length,
    );
  });

  it("--fail-on-change exits 1 for the tightened policy and 0 for the same policy; json lists what changed and what is inexact", async () => {
    const tightened = await run(["--policy", tight, "--format", "json", "--fail-on-change"]);
    expect(tightened.code, tightened.err).toBe(1);
    const report = reportSchema.parse(JSON.parse(tightened.out));
    const expected = evaluations().filter(
      (e) => e.action === "repo.search" && e.decision === "allow" && !e.redacted,
    );
    expect(idsOf(report.changed)).toEqual(idsOf(expected));
    expect(report.summary.changed).toBe(expected.length);
    expect(idsOf(report.inexact)).toEqual(idsOf(evaluations().filter((e) => e.redacted)));
    for (const r of report.inexact) {
      expect(r.exact).toBe(false);
      expect(r.masked).toEqual(["/action/args/query"]);
    }
    expect(report.not_replayable).toEqual([
      expect.objectContaining({ decision_id: NO_INPUT_ID, why: "missing_input" }),
    ]);

    const same = await run(["--policy", sample, "--fail-on-change"]);
    expect(same.code, same.err).toBe(0);
    expect(same.out).toContain("changed: 0");
    expect(same.out).toMatch(/allow → allow\s+\d+/);
    expect(same.out).not.toMatch(/^changed /m);
    // Without --fail-on-change, changes are reported and the exit code is 0.
    const table = await run(["--policy", tight]);
    expect(table.code).toBe(0);
    expect(table.out).toContain(`changed: ${expected.length}`);
    expect(table.out).toMatch(
      new RegExp(`^changed .*allow → deny.*${expected[0]?.decision_id}  reasons -? ?→ search_closed`, "m"),
    );
    expect(table.out).toMatch(
      /^inexact .*masked \/action\/args\/query; its revision over the kept input: allow$/m,
    );
    expect(table.out).toMatch(
      /^over redacted inputs: \d+ of \d+ may have changed \(\d+ compared with the archived revision/m,
    );
    expect(table.out).toContain(`${NO_INPUT_ID}  the entry holds no input`);
  });

  it("--since/--until, filters and --limit select the entries replayed", async () => {
    const since = new Date(FROM.getTime() + 2 * DAY).toISOString();
    const until = new Date(FROM.getTime() + 4 * DAY).toISOString();
    const inWindow = evaluations().filter((e) => e.timestamp >= since && e.timestamp < until);
    const window = reportSchema.parse(
      JSON.parse(
        (await run(["--policy", tight, "--format", "json", "--since", since, "--until", until])).out,
      ),
    );
    expect(window.summary.considered).toBe(inWindow.length);
    expect(idsOf(window.changed)).toEqual(
      idsOf(inWindow.filter((e) => e.action === "repo.search" && e.decision === "allow" && !e.redacted)),
    );

    const bobs = evaluations().filter((e) => e.subject === "bob" && e.action === "repo.search");
    const filtered = await run([
      "--policy",
      tight,
      "--format",
      "json",
      "--subject",
      "bob",
      "--action",
      "repo.search",
    ]);
    const report = reportSchema.parse(JSON.parse(filtered.out));
    expect(report.summary.considered).toBe(bobs.length);
    // Bob's searches were denied already (not his workspace): the candidate changes none.
    expect(report.summary.transitions).toEqual({ "deny → deny": bobs.filter((e) => !e.redacted).length });

    const denied = reportSchema.parse(
      JSON.parse(
        (await run(["--policy", tight, "--format", "json", "--decision", "deny", "--limit", "25"])).out,
      ),
    );
    expect(denied.summary.considered).toBe(25);
    expect(denied.summary.changed).toBe(0);
  });

  it("refuses usage errors with exit 2, and a candidate that does not load with exit 1", async () => {
    expect(await policyCommand(["replay", "--config", config])).toBe(2);
    expect(await policyCommand(["replay", "--config", config, "--policy", tight, "--format", "xml"])).toBe(2);
    expect(
      await policyCommand(["replay", "--config", config, "--policy", tight, "--since", "last week"]),
    ).toBe(2);
    const broken = path.join(tmp, "broken");
    await cp(sample, broken, { recursive: true });
    await writeFile(path.join(broken, "writ", "decision.rego"), "package writ\n\ndecision := {\n");
    const answer = await run(["--policy", broken]);
    expect(answer.code).toBe(1);
    expect(answer.err).toContain("the candidate does not load");
  });
});
