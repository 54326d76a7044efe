/**
 * The cost of a Code Mode sandbox run (src/codemode/sandbox.ts), in the parts it is made of:
 * - cold: the first run in the process (worker thread, WebAssembly compile, sucrase's import);
 * - a run that returns at once: one fresh QuickJS runtime and context, the prelude, the thread's
 *   round trip; with the source transpiled (a new source each time) and from the cache;
 * - a run making 10 trivial inner calls, one after another and all at once (Promise.all), and
 *   from them the cost per inner call (the thread's round trip and the JSON both ways);
 * - the engine alone on this thread (no worker): runtime + context + prelude, and per call;
 * - a pool of 3 threads (issue 27): a run returning at once while 2 others spin on their CPU
 *   limit, against the same run on the idle pool, and on a pool of 1 thread (the design before
 *   the pool, all runs sharing one thread) behind 1 spinning run.
 *
 * Inner calls answer `{ ok: true }` at once. Medians over the iterations.
 * Run: npx tsx bench/sandbox.ts [iterations]
 */
import { closeSandbox, DEFAULT_LIMITS, runProgram, SandboxPool } from "../src/codemode/sandbox.ts";
import { sandboxInstance } from "../src/codemode/sandbox-instance.ts";
import { startEngineRun } from "../src/codemode/sandbox-run.ts";
import { transpileProgram } from "../src/codemode/transpile.ts";

const iterations = Number(process.argv[2] ?? "200");
const tools = ["read"];
const call = async () => ({ ok: true });

const EMPTY = "return 1;";
const SEQUENTIAL =
  "const out = []; for (let i = 0; i < 10; i++) out.push(await tools.read({ path: 'f' + i })); return out.length;";
const PARALLEL =
  "const out = await Promise.all(Array.from({ length: 10 }, (_, i) => tools.read({ path: 'f' + i }))); return out.length;";

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function timed(n: number, once: (i: number) => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const begun = performance.now();
    await once(i);
    samples.push(performance.now() - begun);
  }
  return median(samples);
}

const ms = (value: number) => `${value.toFixed(3)} ms`;

const coldBegun = performance.now();
await runProgram(EMPTY, { tools, call });
const cold = performance.now() - coldBegun;

// Warm-up: the JIT on both threads, before anything is measured.
for (const program of [EMPTY, SEQUENTIAL, PARALLEL])
  await timed(50, () => runProgram(program, { tools, call }));

const empty = await timed(iterations, () => runProgram(EMPTY, { tools, call }));
const fresh = await timed(iterations, (i) => runProgram(`${EMPTY} // ${i}`, { tools, call }));
const sequential = await timed(iterations, () => runProgram(SEQUENTIAL, { tools, call }));
const parallel = await timed(iterations, () =>
  runProgram(PARALLEL, { tools, call, limits: { maxConcurrentCalls: 10 } }),
);
const transpile = await timed(iterations, (i) => transpileProgram(`${SEQUENTIAL} // transpile ${i}`));
await closeSandbox();

// The engine alone, on this thread: what the worker spends per run and per call.
const instance = await sandboxInstance();
const engine = async (code: string) => {
  const transpiled = await transpileProgram(code);
  if (!transpiled.ok) throw new Error(transpiled.message);
  const run = startEngineRun(instance.module, {
    code: transpiled.code,
    tools,
    limits: { ...DEFAULT_LIMITS, maxConcurrentCalls: 10 },
    clockMs: Date.now(),
    host: { call: async () => ({ kind: "value", json: '{"ok":true}' }), late: () => undefined },
  });
  return run.outcome;
};
const engineEmpty = await timed(iterations, () => engine(EMPTY));
const engineSequential = await timed(iterations, () => engine(SEQUENTIAL));

// A quick run beside spinning ones: a pool keeps it on a thread of its own.
const SPIN = "for (;;) {}";
const spinLimits = { cpuMs: 2000 };
const quick = (pool: SandboxPool) => runProgram("return 42;", { tools, call, pool });
const pool = new SandboxPool(3);
const idleQuick = await timed(20, () => quick(pool));
const spinning = [1, 2].map(() => runProgram(SPIN, { tools, call, pool, limits: spinLimits }));
const besideSpinning = await timed(20, () => quick(pool));
await Promise.all(spinning);
await pool.close();
const single = new SandboxPool(1);
await quick(single);
const spinningAlone = runProgram(SPIN, { tools, call, pool: single, limits: spinLimits });
const behindOnOne = await timed(1, () => quick(single));
await spinningAlone;
await single.close();

const rows: [string, string][] = [
  ["cold first run (thread, wasm compile, sucrase)", ms(cold)],
  ["run returning at once (source cached)", ms(empty)],
  ["run returning at once (new source: + transpile)", ms(fresh)],
  ["transpile alone (sucrase, 1-line program)", ms(transpile)],
  ["run with 10 inner calls, one after another", ms(sequential)],
  ["run with 10 inner calls, Promise.all", ms(parallel)],
  ["per inner call, one after another", ms((sequential - empty) / 10)],
  ["engine alone: runtime + context + prelude + return", ms(engineEmpty)],
  ["engine alone: per inner call", ms((engineSequential - engineEmpty) / 10)],
  ["pool of 3: return 42, idle pool (median of 20)", ms(idleQuick)],
  [
    "pool of 3: return 42 beside 2 spinning runs",
    `${ms(besideSpinning)} (×${(besideSpinning / idleQuick).toFixed(2)})`,
  ],
  [
    "pool of 1: return 42 behind 1 spinning run (cpu 2 s)",
    `${ms(behindOnOne)} (×${(behindOnOne / idleQuick).toFixed(0)})`,
  ],
];
const width = Math.max(...rows.map(([name]) => name.length));
console.log(`sandbox: medians of ${iterations} runs`);
for (const [name, value] of rows) console.log(`  ${name.padEnd(width)}  ${value}`);
