/**
 * CPU profiles of a benchmark phase (the main thread, V8's sampling profiler through
 * `node:inspector/promises`) and a short summary of one: where self time goes, by function and
 * by file, and the inclusive time of the project's own functions.
 *
 * Also a command: `npx tsx bench/lib/profile.ts file.cpuprofile [top] [inclusive-regex]` prints
 * the summary of a saved profile (from a benchmark's `--profile`, `node --cpu-prof`, or DevTools).
 */
import { readFile, writeFile } from "node:fs/promises";
import type { Profiler } from "node:inspector";
import { Session } from "node:inspector/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";

/** Runs `phase` under the sampling profiler and writes the profile to `file` (DevTools opens it). */
export async function profileDuring<T>(
  file: string,
  phase: () => Promise<T>,
  { intervalUs = 200 }: { intervalUs?: number } = {},
): Promise<{ result: T; profile: Profiler.Profile }> {
  const session = new Session();
  session.connect();
  try {
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: intervalUs });
    await session.post("Profiler.start");
    let result: T;
    let profile: Profiler.Profile;
    try {
      result = await phase();
    } finally {
      // Stop even when the phase fails, so that the profiler does not keep sampling.
      profile = (await session.post("Profiler.stop")).profile;
    }
    await writeFile(file, JSON.stringify(profile));
    return { result, profile };
  } finally {
    session.disconnect();
  }
}

const profileSchema = z.object({
  nodes: z.array(
    z.object({
      id: z.number(),
      callFrame: z.object({ functionName: z.string(), url: z.string(), lineNumber: z.number() }),
      children: z.array(z.number()).optional(),
    }),
  ),
  samples: z.array(z.number()).optional(),
  timeDeltas: z.array(z.number()).optional(),
});

/** The part of a CPU profile the summary reads. */
export type CpuProfile = z.infer<typeof profileSchema>;

export async function readProfile(file: string): Promise<CpuProfile> {
  const parsed = profileSchema.safeParse(JSON.parse(await readFile(file, "utf8")));
  if (!parsed.success) throw new Error(`${file} is not a CPU profile: ${parsed.error.message}`);
  return parsed.data;
}

export interface Share {
  name: string;
  /** Percent of the profile's sampled time. */
  percent: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** Self time by function (name, file, line). */
  selfByFunction: Share[];
  /** Self time by file; npm packages as `npm:<package>`. */
  selfByFile: Share[];
  /** Inclusive time of the functions whose name matches `inclusive` (each counted once per sample). */
  inclusive: Share[];
}

type CallFrame = CpuProfile["nodes"][number]["callFrame"];

/**
 * `function file:line`, the file relative to `root` (or to node_modules for packages). TypeScript
 * files run transpiled (tsx), so their line numbers are not the source's: they go without one.
 * A native function (no file) is named with its caller, `run (native, in signOneShot)`: several
 * share one name (better-sqlite3's statement run and Node's crypto sign are both `run`).
 */
function functionName(frame: CallFrame, root: string, caller?: CallFrame): string {
  const file = displayPath(frame.url, root);
  const name = frame.functionName || "(anonymous)";
  if (file === "") {
    if (name.startsWith("(")) return name;
    return caller ? `${name} (native, in ${caller.functionName || "(anonymous)"})` : `${name} (native)`;
  }
  return /\.[cm]?tsx?$/.test(file) ? `${name} ${file}` : `${name} ${file}:${frame.lineNumber + 1}`;
}

function displayPath(url: string, root: string): string {
  if (url === "") return "";
  const packaged = url.match(/node_modules\/(.*)$/);
  if (packaged?.[1] !== undefined) return packaged[1];
  if (url.startsWith(root)) return url.slice(root.length);
  return url;
}

function fileName(frame: CallFrame, root: string, caller?: CallFrame): string {
  if (frame.url === "") return functionName(frame, root, caller);
  const packaged = frame.url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (packaged?.[1] !== undefined) return `npm:${packaged[1]}`;
  return displayPath(frame.url, root);
}

function ranked(times: Map<string, number>, total: number, top: number): Share[] {
  return [...times]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, time]) => ({ name, percent: total === 0 ? 0 : (100 * time) / total }));
}

/**
 * Summarizes `profile`. `root` is the project's directory as a file URL prefix (`file:///…/`);
 * `inclusive` selects the functions whose inclusive time is listed (default: the project's `src/`).
 */
export function summarizeProfile(
  profile: CpuProfile,
  { root, top = 15, inclusive }: { root: string; top?: number; inclusive?: RegExp },
): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

  const callerOf = (id: number) => {
    const parent = parentOf.get(id);
    return parent === undefined ? undefined : byId.get(parent)?.callFrame;
  };
  // The profiler's own stop (it serializes the profile on the main thread) is no part of the phase.
  const profilerNodes = new Set<number>();
  for (const node of profile.nodes) {
    if (node.callFrame.url === "node:inspector" || profilerNodes.has(parentOf.get(node.id) ?? -1)) {
      profilerNodes.add(node.id);
    }
  }

  // Self time per profile node: each sample's time delta goes to the node it hit.
  const selfTime = new Map<number, number>();
  let total = 0;
  const deltas = profile.timeDeltas ?? [];
  (profile.samples ?? []).forEach((id, i) => {
    if (profilerNodes.has(id)) return;
    const delta = deltas[i] ?? 0;
    total += delta;
    selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
  });

  const add = (map: Map<string, number>, key: string, time: number) =>
    map.set(key, (map.get(key) ?? 0) + time);
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  const inclusiveTime = new Map<string, number>();
  const selected = inclusive ?? / src\//;
  for (const [id, time] of selfTime) {
    const node = byId.get(id);
    if (!node) continue;
    add(byFunction, functionName(node.callFrame, root, callerOf(id)), time);
    add(byFile, fileName(node.callFrame, root, callerOf(id)), time);
    // Inclusive: every function on the sample's stack, once even when it recurses.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (!frame) break;
      const name = functionName(frame, root, callerOf(at));
      if (seen.has(name)) continue;
      seen.add(name);
      if (selected.test(name)) add(inclusiveTime, name, time);
    }
  }
  return {
    totalMs: total / 1000,
    selfByFunction: ranked(byFunction, total, top),
    selfByFile: ranked(byFile, total, top),
    inclusive: ranked(inclusiveTime, total, top),
  };
}

export function printProfileSummary(
  summary: ProfileSummary,
  { byFile = false, inclusiveTitle = "src/ functions" } = {},
): void {
  const section = (title: string, shares: Share[]) => {
    console.log(title);
    for (const share of shares) console.log(`${share.percent.toFixed(1).padStart(6)}%  ${share.name}`);
  };
  console.log(`profile: ${(summary.totalMs / 1000).toFixed(2)} s sampled`);
  section("top self time, by function:", summary.selfByFunction);
  if (byFile) section("top self time, by file:", summary.selfByFile);
  section(`top inclusive time, ${inclusiveTitle}:`, summary.inclusive);
}

/** The project root as the file URL prefix that profiles' frames carry. */
export function projectRootUrl(root: string): string {
  return pathToFileURL(root.endsWith(path.sep) ? root : `${root}${path.sep}`).href;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [file, topArg, filter] = process.argv.slice(2);
  if (file === undefined) {
    console.error("usage: npx tsx bench/lib/profile.ts file.cpuprofile [top] [inclusive-regex]");
    process.exit(2);
  }
  const root = projectRootUrl(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../.."));
  const summary = summarizeProfile(await readProfile(file), {
    root,
    top: topArg === undefined ? 30 : Number(topArg),
    ...(filter === undefined ? {} : { inclusive: new RegExp(filter) }),
  });
  printProfileSummary(summary, {
    byFile: true,
    ...(filter === undefined ? {} : { inclusiveTitle: `functions matching /${filter}/` }),
  });
}
