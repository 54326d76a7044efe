/**
 * `writ logs …` in-process against the SQLite store a real gateway writes: query with filters and
 * paging, show, tail following new decisions, export as NDJSON and OPA events, verify on an intact
 * log and after an entry was edited in the file (exit 1 naming it), and the exit codes of usage
 * and unreadable-configuration errors.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { canonicalCall, logEntrySchema, type Outcome, onlyOutcome, README_ARGS, WS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
import { runLogs, startLogs, tamperWithEntry, writeStoreConfig } from "./logs-helpers.ts";

let gw: TestGateway;
let tmp: string;
let config: string;
const outcomes: Outcome[] = [];

async function decide(subject: string, tool: string, args: Record<string, unknown>): Promise<Outcome> {
  const token = await gw.token(subject);
  const outcome = onlyOutcome(
    await gw.propose(token, { format: "canonical", payload: canonicalCall(tool, args) }),
  );
  outcomes.push(outcome);
  return outcome;
}

beforeAll(async () => {
  gw = await startTestGateway();
  tmp = await mkdtemp(path.join(os.tmpdir(), "writ-logs-"));
  config = await writeStoreConfig(gw, tmp);
  await decide("alice", "repo.read", README_ARGS);
  await decide("alice", "repo.read", { workspace: WS, path: ".env" });
  await decide("bob", "repo.read", README_ARGS);
  await decide("alice", "repo.search", { workspace: WS, query: "sum" });
  expect(outcomes.map((o) => o.decision)).toEqual(["allow", "deny", "deny", "allow"]);
});

afterAll(async () => {
  await gw?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const ndjsonEntries = (lines: string[]) => lines.map((line) => logEntrySchema.parse(JSON.parse(line)));

describe("writ logs query", () => {
  it("filters by subject, decision and reason, newest first, as NDJSON", async () => {
    const run = await runLogs(["query", "--config", config, "--subject", "alice", "--format", "ndjson"]);
    expect(run.code, run.stderr).toBe(0);
    const entries = ndjsonEntries(run.stdout);
    expect(entries.map((e) => e.decision_id)).toEqual(
      [outcomes[3], outcomes[1], outcomes[0]].map((o) => o?.decision_id),
    );

    const denied = await runLogs(["query", "--config", config, "--decision", "deny", "--format", "ndjson"]);
    expect(ndjsonEntries(denied.stdout).map((e) => e.subject)).toEqual(["bob", "alice"]);
    const notOwner = await runLogs([
      "query",
      "--config",
      config,
      "--reason",
      "not_owner",
      "--format",
      "ndjson",
    ]);
    expect(ndjsonEntries(notOwner.stdout).map((e) => e.decision_id)).toEqual([outcomes[2]?.decision_id]);
    const byResource = await runLogs([
      "query",
      "--config",
      config,
      "--resource",
      `workspace/${WS}`,
      "--action",
      "repo.search",
      "--format",
      "ndjson",
    ]);
    expect(ndjsonEntries(byResource.stdout).map((e) => e.decision_id)).toEqual([outcomes[3]?.decision_id]);
  });

  it("prints a table and pages with --limit and the printed cursor", async () => {
    const first = await runLogs(["query", "--config", config, "--limit", "3"]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout[0]).toMatch(/^SEQ\s+TIME\s+DECISION\s+SUBJECT/);
    expect(first.stdout).toHaveLength(4);
    expect(first.stdout[1]).toContain(outcomes[3]?.decision_id);
    const cursor = /--cursor (\S+)/.exec(first.stderr)?.[1];
    expect(cursor, first.stderr).toBeDefined();
    const second = await runLogs(["query", "--config", config, "--limit", "3", "--cursor", cursor ?? ""]);
    expect(second.stdout.slice(1).join("\n")).toContain(outcomes[0]?.decision_id);
    expect(second.stderr).toBe("");
  });

  it("refuses bad flags and filters with exit code 2 and says what to do", async () => {
    const bad = await runLogs(["query", "--config", config, "--decision", "maybe"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("next: decision is one of allow, deny");
    const badTime = await runLogs(["query", "--config", config, "--since", "yesterday"]);
    expect(badTime.code).toBe(2);
    expect(badTime.stderr).toContain("ISO 8601");
    expect((await runLogs(["query", "--bogus"])).code).toBe(2);
  });

  it("an unreadable configuration is exit code 3", async () => {
    const run = await runLogs(["query", "--config", path.join(tmp, "missing.yaml")]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("next:");
  });
});

describe("writ logs show", () => {
  it("prints the whole entry: reasons, policy revision, resource, redaction, timings", async () => {
    const denied = outcomes[1];
    const run = await runLogs(["show", "--config", config, denied?.decision_id ?? ""]);
    expect(run.code, run.stderr).toBe(0);
    const text = run.stdout.join("\n");
    expect(text).toContain(`decision ${denied?.decision_id}`);
    expect(text).toMatch(/outcome\s+deny/);
    expect(text).toContain("path_not_readable");
    expect(text).toMatch(/policy\s+writ\/decision\s+revision \S+/);
    expect(text).toMatch(/resource\s+workspace\/ws-demo\s+revision \d+/);
    expect(text).toContain("timer_rego_query_eval_ns");
    expect(text).toContain("redacted from the stored input");

    const json = await runLogs(["show", "--config", config, "--format", "json", denied?.decision_id ?? ""]);
    expect(logEntrySchema.parse(JSON.parse(json.stdout.join("\n"))).decision_id).toBe(denied?.decision_id);
  });

  it("an unknown id is exit code 1", async () => {
    const run = await runLogs(["show", "--config", config, "no-such-decision"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("writ logs query");
  });
});

describe("writ logs tail", () => {
  it("prints the recent entries, then each new decision, until stopped", async () => {
    const stop = new AbortController();
    const tail = startLogs(
      ["tail", "--config", config, "-n", "2", "--interval", "50", "--format", "ndjson", "--subject", "alice"],
      stop.signal,
    );
    await waitFor("the two most recent entries", async () => (tail.stdout.length >= 2 ? true : undefined));
    const fresh = await decide("alice", "repo.read", README_ARGS);
    await decide("bob", "repo.read", README_ARGS); // filtered out
    await waitFor("the tail to print the new decision", async () =>
      tail.stdout.length >= 3 ? true : undefined,
    );
    stop.abort();
    const run = await tail.done;
    expect(run.code, run.stderr).toBe(0);
    expect(ndjsonEntries(run.stdout).map((e) => e.decision_id)).toEqual(
      [outcomes[1], outcomes[3], fresh].map((o) => o?.decision_id),
    );
  });
});

describe("writ logs export", () => {
  it("writes every matching entry oldest first, as stored or as OPA decision-log events", async () => {
    const since = new Date(Date.now() - 60_000).toISOString();
    const stored = await runLogs(["export", "--config", config, "--since", since]);
    expect(stored.code, stored.stderr).toBe(0);
    expect(ndjsonEntries(stored.stdout).map((e) => e.decision_id)).toEqual(
      outcomes.map((o) => o.decision_id),
    );
    expect((await runLogs(["export", "--config", config, "--until", since])).stdout).toEqual([]);

    const opa = await runLogs(["export", "--config", config, "--format", "opa", "--decision", "deny"]);
    const events = opa.stdout.map((line) =>
      z
        .strictObject({
          decision_id: z.string(),
          path: z.literal("writ/decision"),
          input: z.record(z.string(), z.unknown()),
          result: z.object({ decision: z.literal("deny") }).passthrough(),
          timestamp: z.iso.datetime(),
          bundles: z.object({ writ: z.object({ revision: z.string() }) }),
          metrics: z.record(z.string(), z.number()),
          erased: z.array(z.string().startsWith("/input")),
          masked: z.array(z.string().startsWith("/input")),
          labels: z.record(z.string(), z.string()),
          requested_by: z.string(),
          req_id: z.number().int(),
        })
        .parse(JSON.parse(line)),
    );
    expect(events.map((e) => e.decision_id)).toEqual(
      outcomes.filter((o) => o.decision === "deny").map((o) => o.decision_id),
    );
    expect(events.map((e) => e.requested_by).slice(0, 2)).toEqual(["demo/alice", "demo/bob"]);
    expect(events[1]?.labels).toMatchObject({ app: "writ", decision: "deny", reasons: "not_owner" });
  });
});

describe("writ logs verify", () => {
  it("exit code 0 with the entry count while the chain is intact", async () => {
    const run = await runLogs(["verify", "--config", config]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.join("\n")).toMatch(
      /^intact: \d+ entries, head hash [0-9a-f]{64}\ncheckpoints: none found/,
    );
  });

  it("exit code 1 naming the first broken entry after one was edited in the file", async () => {
    const target = logEntrySchema.parse((await gw.gateway.log.get(outcomes[1]?.decision_id ?? ""))!);
    tamperWithEntry(gw, target.seq);
    const run = await runLogs(["verify", "--config", config]);
    expect(run.code).toBe(1);
    expect(run.stdout.join("\n")).toContain(
      `broken at seq ${target.seq} (decision ${target.decision_id}): hash_mismatch`,
    );
    expect(run.stderr).toContain("next:");
    const json = await runLogs(["verify", "--config", config, "--format", "json"]);
    expect(JSON.parse(json.stdout.join(""))).toMatchObject({
      ok: false,
      first_broken: { seq: target.seq, decision_id: target.decision_id, reason: "hash_mismatch" },
    });
  });
});
