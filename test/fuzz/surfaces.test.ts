/**
 * A seeded sample of the fuzz harness (bench/fuzz.ts; generators and properties in
 * test/support/fuzz.ts) against a real gateway on loopback: a few hundred mutated inputs over the
 * HTTP API, /mcp and the token verifier. Every answer must come in time, be 2xx/4xx, carry a
 * WritError when it is an error (JSON-RPC error with WritError data on /mcp), never accept a
 * mutated token; the decision log's chain must verify afterwards.
 *
 * Reproduce or widen: WRIT_FUZZ_SEED=<n> WRIT_FUZZ_RUNS=<n> npx vitest run test/fuzz
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FuzzContext, runFuzz, startFuzzContext, surfaces } from "../support/fuzz.ts";

const seed = Number(process.env.WRIT_FUZZ_SEED ?? "1515");
const runs = Number(process.env.WRIT_FUZZ_RUNS ?? "450");

let ctx: FuzzContext;

beforeAll(async () => {
  ctx = await startFuzzContext();
}, 60_000);

afterAll(async () => {
  await ctx?.gw.close();
});

describe(`fuzzing the gateway's surfaces (seed ${seed}, ${runs} inputs)`, () => {
  it("answers every input in time with 2xx/4xx and a WritError, and keeps the chain intact", async () => {
    const report = await runFuzz(ctx, { runs, seed, timeoutMs: 5_000, tamperEntries: 100 });
    const failures = report.failures.map(
      (f) =>
        `${f.problem}\n  reproduce: npx tsx bench/fuzz.ts --seed ${f.seed} --surface ${f.surface} --only ${f.index}\n  input: ${f.input}`,
    );
    expect(failures).toEqual([]);
    expect(report.chain).toMatchObject({ ok: true });
    // Every surface was driven, and not only into refusals.
    for (const surface of surfaces) {
      const statuses = Object.values(report.counts[surface] ?? {}).flatMap((by) => Object.keys(by));
      expect(statuses.length, surface).toBeGreaterThan(0);
    }
    const statusesOf = (surface: string) =>
      Object.values(report.counts[surface] ?? {}).flatMap((by) => Object.keys(by));
    expect(statusesOf("http")).toContain("200");
    expect(statusesOf("mcp")).toContain("200");
    expect(statusesOf("token")).toContain("refused");
    expect(report.chain.entries).toBeGreaterThan(0);
    // Every byte-level edit of a stored entry is caught where it was made, and undone.
    expect(report.tamper?.misses).toEqual([]);
    expect(report.tamper).toMatchObject({ edited: 100, caught: 100, restored: true });
    // Stale grants and unknown tools were tried.
    const labels = Object.keys(report.counts.http ?? {});
    expect(labels.some((label) => label.includes("stale grant"))).toBe(true);
    expect(labels.some((label) => label.includes("unknown tool"))).toBe(true);
  }, 120_000);
});
