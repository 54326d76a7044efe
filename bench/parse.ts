/**
 * Parser throughput on the OPA conformance modules, with JSON.parse on a document of similar size
 * as a same-run baseline. Run with `npx tsx bench/parse.ts`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { parseModule } from "../src/rego/syntax/index.ts";

const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const casesDir = resolve(repositoryRoot, "../shared/conformance/opa/cases");
const WARMUP_MS = 1500;
const MEASURE_MS = 4000;

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return path.endsWith(".yaml") ? [path] : [];
  });
}

function modulesOf(document: unknown): string[] {
  if (typeof document !== "object" || document === null || !("cases" in document)) return [];
  const cases = document.cases;
  if (!Array.isArray(cases)) return [];
  return cases.flatMap((c: unknown) => {
    if (typeof c !== "object" || c === null || !("modules" in c) || !Array.isArray(c.modules)) return [];
    return c.modules.filter((m: unknown): m is string => typeof m === "string");
  });
}

/** Runs `round` until `ms` milliseconds have passed; returns rounds and elapsed milliseconds. */
function timed(ms: number, round: () => void): { rounds: number; elapsed: number } {
  const start = performance.now();
  let rounds = 0;
  let elapsed = 0;
  while (elapsed < ms) {
    round();
    rounds++;
    elapsed = performance.now() - start;
  }
  return { rounds, elapsed };
}

function throughput(label: string, bytes: number, round: () => void): number {
  timed(WARMUP_MS, round);
  const { rounds, elapsed } = timed(MEASURE_MS, round);
  const mbPerSecond = (bytes * rounds) / (elapsed / 1000) / 1e6;
  console.log(
    `${label}: ${mbPerSecond.toFixed(1)} MB/s (${rounds} rounds in ${(elapsed / 1000).toFixed(2)} s)`,
  );
  return mbPerSecond;
}

function main(): void {
  if (!existsSync(casesDir)) {
    console.log(`skipped: conformance cases not found at ${casesDir}`);
    return;
  }
  const documents = yamlFiles(casesDir).map((file) => parseYaml(readFileSync(file, "utf8")) as unknown);
  const modules = documents.flatMap(modulesOf);
  const regoBytes = modules.reduce((sum, m) => sum + Buffer.byteLength(m), 0);
  const parsing = modules.filter((m, i) => parseModule(m, `module-${i}.rego`).errors.length === 0);
  const failures = modules.length - parsing.length;
  console.log(
    `${modules.length} modules, ${(regoBytes / 1e6).toFixed(2)} MB of Rego, ${failures} with parse errors`,
  );

  const rego = throughput("Rego parseModule", regoBytes, () => {
    for (let i = 0; i < modules.length; i++) parseModule(modules[i]!, "bench.rego");
  });
  const modulesPerSecond = (rego * 1e6) / (regoBytes / modules.length);
  console.log(`  ≈ ${Math.round(modulesPerSecond)} modules/s`);

  // The statements of the modules that parse, as one large module (no per-module overhead, but
  // a large AST: V8's young-generation collections then dominate).
  const statements = parsing.map((m) => m.replace(/^package .*$/m, "")).join("\n");
  const large = `package bench\n${statements}`;
  const largeErrors = parseModule(large, "large.rego").errors.length;
  console.log(`one module of ${(Buffer.byteLength(large) / 1e6).toFixed(2)} MB (${largeErrors} errors):`);
  throughput("Rego parseModule, one large module", Buffer.byteLength(large), () =>
    parseModule(large, "large.rego"),
  );

  // A JSON document of about the same size: the case files themselves, repeated as needed.
  const parts: string[] = [];
  let jsonBytes = 0;
  for (let i = 0; jsonBytes < regoBytes; i = (i + 1) % documents.length) {
    const part = JSON.stringify(documents[i]);
    parts.push(part);
    jsonBytes += Buffer.byteLength(part) + 1;
  }
  const json = `[${parts.join(",")}]`;
  const baseline = throughput("JSON.parse baseline", Buffer.byteLength(json), () => JSON.parse(json));
  console.log(`Rego parsing runs at ${(rego / baseline).toFixed(2)}× JSON.parse throughput`);
}

main();
