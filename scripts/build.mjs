#!/usr/bin/env node
// `npm run build` (and `prepare`, which `npm install` and `npm pack` run): compiles src/ to
// dist/ with tsc (JavaScript and declarations; `.ts` import specifiers are rewritten to `.js`),
// then copies the files the code reads at run time beside their modules (the Rego runtime's
// runtime.wasm, the embedded default configuration), writes the digest of the compiler's code
// (dist/rego/compiler-fingerprint.txt) and precompiles the sample policies (policies/) into the
// compiled-policy cache that ships in dist/policy/compiled/, so that `writ serve` with the
// embedded default starts without loading the compiler. dist/ starts empty so no module deleted
// from src/ lingers in it. Plain Node: it runs before anything else is built.
//
// With --prepare it also installs tools/mcp-conformance's own dependencies (the MCP conformance
// suite's tests use it), except under `npm pack` and `npm publish`, where only the build belongs.
import { spawnSync } from "node:child_process";
import { cpSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const src = path.join(root, "src");
const dist = path.join(root, "dist");
/** Sources of the Rego runtime (AssemblyScript), built separately into runtime.wasm. */
const notShipped = [path.join(src, "rego", "runtime", "assembly")];

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`build: ${[path.basename(command), ...args].join(" ")} failed (exit ${result.status})`);
    process.exit(result.status ?? 1);
  }
}

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
// --noCheck: emit only (15 s here instead of 35 s). The type check, declaration errors included
// (tsconfig.json sets `declaration`), is `tsc --noEmit`'s job, run before every commit.
run(process.execPath, [tsc, "-p", path.join(root, "tsconfig.build.json"), "--noCheck"]);

let assets = 0;
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  const file = path.join(entry.parentPath, entry.name);
  if (!entry.isFile() || /\.(tsx?|md)$/.test(entry.name)) continue;
  if (notShipped.some((dir) => file.startsWith(dir + path.sep))) continue;
  cpSync(file, path.join(dist, path.relative(src, file)));
  assets += 1;
}
console.log(`build: dist/ compiled from src/, ${assets} run-time files copied`);

// The entry is valid for this build only: its key holds the digest of dist/'s compiler code (and
// the binaryen version it ran with; an install that resolves another one compiles at start).
const cache = await import(pathToFileURL(path.join(dist, "policy", "compiled-cache.js")).href);
const codeDigest = await cache.compilerCodeDigest();
writeFileSync(path.join(dist, "rego", cache.FINGERPRINT_FILE), `${codeDigest}\n`);
const { PolicyEngine } = await import(pathToFileURL(path.join(dist, "policy", "engine.js")).href);
const samples = new PolicyEngine({
  sourceRoot: root,
  compiledCache: new cache.CompiledPolicyCache({ readDirs: [], writeDir: cache.shippedCacheDir }),
});
const revision = await samples.loadDirectory(path.join(root, "policies"));
// And as the default configuration runs them: with strict builtin errors.
const strictSamples = new PolicyEngine({
  sourceRoot: root,
  strictBuiltinErrors: true,
  compiledCache: new cache.CompiledPolicyCache({ readDirs: [], writeDir: cache.shippedCacheDir }),
});
await strictSamples.loadDirectory(path.join(root, "policies"));
console.log(`build: sample policies precompiled (revision ${revision}) into dist/policy/compiled/`);

const packing = ["pack", "publish"].includes(process.env.npm_command ?? "");
if (process.argv.includes("--prepare") && !packing) {
  const npm = process.env.npm_execpath;
  const args = [
    "install",
    "--prefix",
    "tools/mcp-conformance",
    "--no-audit",
    "--no-fund",
    "--loglevel=error",
  ];
  if (npm) run(process.execPath, [npm, ...args]);
  else run("npm", args);
}
