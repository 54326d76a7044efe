/**
 * `writ policy test` over a corpus of policies and their tests, as one process runs it: how long
 * parsing, compiling (one module holding every test), loading and evaluating take, and how much
 * memory the process needed (peak RSS; V8 heap sampled at each stage's end).
 *
 *   npx tsx bench/corpus.ts <folder>... [--builtins <module.mjs>]... [--run <regex>] [--json <file>]
 *
 * e.g. `npx tsx bench/corpus.ts ../shared/corpora/gatekeeper-library` or, with trivy-checks
 * fetched to /tmp/corpora/trivy-checks, `--builtins bench/corpora/trivy-builtins.mjs`. Run on
 * purpose, never from `npm test`.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { getHeapStatistics } from "node:v8";
import { loadBuiltinsOption } from "../src/cli/policy/builtins.ts";
import { loadPolicyInputs } from "../src/cli/policy/inputs.ts";
import { runTests, type TestStatus } from "../src/rego/tester.ts";
import { busyMachineWarning, describeMachine, machineInfo } from "./lib/machine.ts";
import { formatTable } from "./lib/table.ts";

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const MiB = 1024 * 1024;

const { values, positionals } = parseArgs({
  options: {
    builtins: { type: "string", multiple: true },
    run: { type: "string" },
    json: { type: "string" },
  },
  allowPositionals: true,
});
if (positionals.length === 0) {
  console.error(
    "usage: npx tsx bench/corpus.ts <folder>... [--builtins <module.mjs>]... [--run <regex>] [--json <file>]",
  );
  process.exit(2);
}

const machine = await machineInfo(repositoryRoot);
console.log(describeMachine(machine));
const busy = busyMachineWarning(machine);
if (busy) console.log(busy);

const heapSamples: number[] = [];
const sampleHeap = () => heapSamples.push(getHeapStatistics().used_heap_size);

const started = performance.now();
const builtins = await loadBuiltinsOption(values.builtins);
const inputs = await loadPolicyInputs(positionals, { bundles: false });
const readMs = performance.now() - started;
sampleHeap();
const run = await runTests(inputs.sources, inputs.data, {
  ...(values.run ? { filter: new RegExp(values.run) } : {}),
  ...(builtins ? { builtins } : {}),
});
sampleHeap();
const totalMs = performance.now() - started;
const maxRssBytes = process.resourceUsage().maxRSS * 1024;

const counts: Record<TestStatus, number> = { PASS: 0, FAIL: 0, ERROR: 0, SKIPPED: 0 };
for (const r of run.results ?? []) counts[r.status]++;
const t = run.timings;
const summary = {
  machine,
  corpus: positionals,
  files: inputs.sources.length,
  tests: run.results?.length ?? 0,
  ...counts,
  compileErrors: run.errors?.length ?? 0,
  readMs,
  parseMs: t.parseMs,
  compileMs: t.compileMs,
  loadMs: t.loadMs,
  evalMs: t.evalMs,
  totalMs,
  maxRssMiB: maxRssBytes / MiB,
  maxHeapUsedMiB: Math.max(...heapSamples) / MiB,
};

console.log(
  formatTable(
    [
      ["files (.rego)", summary.files],
      ["tests", summary.tests],
      [
        "passed / failed / errors / skipped",
        `${counts.PASS} / ${counts.FAIL} / ${counts.ERROR} / ${counts.SKIPPED}`,
      ],
      ["compile errors", summary.compileErrors],
      ["read files (ms)", readMs],
      ["parse (ms)", t.parseMs],
      ["compile: one module, every test (ms)", t.compileMs],
      ["load into the SDK (ms)", t.loadMs],
      ["evaluate every test (ms)", t.evalMs],
      ["total (ms)", totalMs],
      ["peak RSS (MiB)", summary.maxRssMiB],
      ["V8 heap used, max of stage ends (MiB)", summary.maxHeapUsedMiB],
    ],
    ["writ policy test", "value"],
  ).join("\n"),
);
for (const e of (run.errors ?? []).slice(0, 10)) console.log(`  ${e.message}`);
if (values.json) await writeFile(values.json, `${JSON.stringify(summary, null, 2)}\n`);
