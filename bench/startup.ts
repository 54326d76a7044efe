/**
 * How fast `writ` commands start, cold (a new Node process each time): `writ --help`,
 * `writ token --sub alice` and `writ policy test` (a two-rule policy: it compiles) in a checkout
 * (the sources through tsx) and, with --package, from the packed package installed into a temp
 * project (plain Node over dist/). Each is run --runs times, interleaved with the others, and
 * reported as its median in seconds and as a multiple of `node -e 0` measured in the same rounds
 * (the ratio is what to compare on a busy machine). --src <checkout> adds another checkout's
 * bin/writ.mjs (say, a commit before a change) to the same rounds.
 *
 * Run: npx tsx bench/startup.ts [--runs 5] [--package] [--src <checkout>] [--json run.json]
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { z } from "zod";
import { busyMachineWarning, describeMachine, machineInfo } from "./lib/machine.ts";

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    package: { type: "boolean", default: false },
    src: { type: "string" },
    json: { type: "string" },
  },
});
const runs = z.coerce.number().int().positive().parse(values.runs);

interface Case {
  name: string;
  command: string;
  args: string[];
}

const work = await mkdtemp(path.join(tmpdir(), "writ-bench-startup-"));
try {
  await mkdir(path.join(work, "policy"));
  await writeFile(path.join(work, "policy/p.rego"), "package p\n\nimport rego.v1\n\nallow if input.x == 1\n");
  await writeFile(
    path.join(work, "policy/p_test.rego"),
    'package p_test\n\nimport rego.v1\n\ntest_x if data.p.allow with input as {"x": 1}\n',
  );

  const writs: { label: string; command: string; args: string[] }[] = [
    { label: "checkout", command: process.execPath, args: [path.join(root, "bin/writ.mjs")] },
  ];
  if (values.src !== undefined) {
    const other = path.resolve(values.src);
    writs.push({
      label: `checkout ${other}`,
      command: process.execPath,
      args: [path.join(other, "bin/writ.mjs")],
    });
  }
  if (values.package) writs.push({ label: "package", command: await installPackage(work), args: [] });

  const cases: Case[] = [{ name: "node -e 0", command: process.execPath, args: ["-e", "0"] }];
  for (const w of writs) {
    for (const [what, argv] of [
      ["writ --help", ["--help"]],
      ["writ token", ["token", "--sub", "alice"]],
      ["writ policy test", ["policy", "test", "policy"]],
    ] as const) {
      cases.push({ name: `${what} (${w.label})`, command: w.command, args: [...w.args, ...argv] });
    }
  }

  const machine = await machineInfo(root);
  console.log(describeMachine(machine));
  const warning = busyMachineWarning(machine);
  if (warning) console.log(warning);

  const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  // One uncounted round first: tsx's transform cache, npm's and the OS's file caches warm up.
  for (let round = 0; round <= runs; round++) {
    for (const c of cases) {
      const started = performance.now();
      await run(c.command, c.args, { cwd: work });
      if (round > 0) times.get(c.name)?.push((performance.now() - started) / 1000);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  const baseline = median(times.get("node -e 0") ?? []);
  const rows = cases.map((c) => {
    const m = median(times.get(c.name) ?? []);
    return { case: c.name, median_s: Number(m.toFixed(3)), x_node: Number((m / baseline).toFixed(1)) };
  });
  console.log(`\n${"command".padEnd(48)} median s   × node -e 0   (${runs} runs each)`);
  for (const r of rows) {
    console.log(
      `${r.case.padEnd(48)} ${r.median_s.toFixed(3).padStart(8)}   ${r.x_node.toFixed(1).padStart(11)}`,
    );
  }
  if (values.json !== undefined) {
    await writeFile(values.json, `${JSON.stringify({ machine, runs, rows }, null, 2)}\n`);
  }
} finally {
  await rm(work, { recursive: true, force: true });
}

/** `npm pack` of the checkout installed into an empty project under `work`: its `writ` command. */
async function installPackage(into: string): Promise<string> {
  const packed = path.join(into, "packed");
  await mkdir(packed);
  await run("npm", ["pack", "--pack-destination", packed, "--loglevel=error"], { cwd: root });
  const tarball = (await readdir(packed)).find((f) => f.endsWith(".tgz"));
  if (tarball === undefined) throw new Error(`npm pack left no tarball in ${packed}`);
  const app = path.join(into, "app");
  await mkdir(app);
  await writeFile(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true }));
  const install = ["install", path.join(packed, tarball), "--prefer-offline", "--ignore-scripts"];
  await run("npm", [...install, "--no-audit", "--no-fund", "--loglevel=error"], { cwd: app });
  return path.join(app, "node_modules/.bin/writ");
}
