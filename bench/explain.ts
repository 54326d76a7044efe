/**
 * Explaining a decision (issue 31): the cost of the instrumented build of the sample policy
 * (`prepareExplainer`, paid once per revision: `policy/explain.ts` keeps it) against the cost of
 * each explanation after it (evaluating the input with its trace, reading the tree and the
 * values of refs, calls and comprehensions), on the demo's `.env` denial and an allowed read.
 *
 * Run: npx tsx bench/explain.ts [--runs 50]
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { prepareExplainer } from "../src/rego/explain.ts";
import { policyInputFor } from "../test/policy/inputs.ts";
import { busyMachineWarning, describeMachine, machineInfo } from "./lib/machine.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { runs: { type: "string", default: "50" } } });
const runs = Number(values.runs);

const dir = path.join(root, "policies", "writ");
const files = (await readdir(dir)).filter((f) => f.endsWith(".rego") && !f.endsWith("_test.rego"));
const sources = await Promise.all(
  files.map(async (f) => ({ file: `writ/${f}`, source: await readFile(path.join(dir, f), "utf8") })),
);
/** Alice reading `filePath` of the demo's workspace. */
const input = (filePath: string) =>
  policyInputFor("repo.read", {
    subject: { tenant: "demo", roles: ["developer"] },
    args: { workspace: "ws-demo", path: filePath },
    resource: {
      type: "workspace",
      id: "ws-demo",
      known: true,
      owner: "alice",
      tenant: "demo",
      revision: "1",
      attributes: {
        read_paths: ["README.md", "src/sum.ts"],
        edit_paths: ["src/sum.ts"],
        files: {},
        reads: {},
      },
    },
  });

const machine = await machineInfo(root);
console.log(describeMachine(machine));
const warning = busyMachineWarning(machine);
if (warning) console.log(warning);

// Loading the compiler is apart: under tsx, a cold cache transpiles all of it first.
let start = performance.now();
await import("../src/rego/build.ts");
const importMs = performance.now() - start;
start = performance.now();
await prepareExplainer(sources, { entrypoint: "writ/decision" });
const firstBuildMs = performance.now() - start;
start = performance.now();
const explainer = await prepareExplainer(sources, { entrypoint: "writ/decision" });
const buildMs = performance.now() - start;

const timings: Record<string, number[]> = { ".env (deny)": [], "README.md (allow)": [] };
for (let i = 0; i < runs; i++) {
  for (const [label, file] of [
    [".env (deny)", ".env"],
    ["README.md (allow)", "README.md"],
  ] as const) {
    start = performance.now();
    explainer.explain(input(file));
    timings[label]?.push(performance.now() - start);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
console.log(`loading the compiler: ${importMs.toFixed(0)} ms`);
console.log(
  `instrumented build, once per revision: ${firstBuildMs.toFixed(0)} ms the first in the process, ${buildMs.toFixed(0)} ms the next`,
);
for (const [label, xs] of Object.entries(timings)) {
  console.log(`explain ${label}: median ${median(xs).toFixed(1)} ms over ${xs.length} runs`);
}
