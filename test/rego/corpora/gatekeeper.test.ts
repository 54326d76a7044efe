/**
 * The Gatekeeper policy library (Rego v0, as shipped: `../shared/corpora/gatekeeper-library/`),
 * run as its CI runs it (`test.sh.upstream`), in process: `check --strict` over all of `src`, then the
 * tests of each folder `src/<group>/<policy>` over that folder's `*.rego` files, all with
 * `--v0-compatible`. Prints each folder's pass count and the total; fails when the share of
 * tests passing falls below the floor reached (which only rises).
 */
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../../src/cli/policy/check.ts";
import { loadPolicyInputs } from "../../../src/cli/policy/inputs.ts";
import { parseModules } from "../../../src/rego/build.ts";
import { discoverTests, runTests } from "../../../src/rego/tester.ts";
import { runCommand } from "../../support/command.ts";
import { corporaDir } from "../../support/paths.ts";

/** Tests passing when the floor was last raised, of the library's tests then. Only rises. */
const FLOOR = { passed: 1003, of: 1003 };

const library = path.join(corporaDir, "gatekeeper-library");
const src = path.join(library, "src");
const present = existsSync(src);
if (!present) {
  console.warn(
    `Gatekeeper library not found at ${library}: its corpus test is skipped (it runs where ../shared is present)`,
  );
}

/** `src/*​/*`, as the CI script's loop lists them. */
async function policyFolders(): Promise<string[]> {
  if (!present) return [];
  const folders: string[] = [];
  for (const group of (await readdir(src, { withFileTypes: true })).filter((e) => e.isDirectory())) {
    const entries = await readdir(path.join(src, group.name), { withFileTypes: true });
    for (const e of entries.filter((e) => e.isDirectory())) folders.push(path.join(group.name, e.name));
  }
  return folders.sort();
}

const folders = await policyFolders();
const results = new Map<string, { passed: number; total: number }>();

describe.skipIf(!present)("the Gatekeeper library, as its CI runs it", () => {
  afterAll(() => {
    if (results.size === 0) return;
    const passed = [...results.values()].reduce((n, r) => n + r.passed, 0);
    const total = [...results.values()].reduce((n, r) => n + r.total, 0);
    console.log(
      [
        "Gatekeeper library, writ policy test --v0-compatible per folder:",
        ...[...results].map(([folder, r]) => `  ${folder}: ${r.passed}/${r.total}`),
        `  overall: ${passed}/${total}${total > 0 ? ` (${((100 * passed) / total).toFixed(1)}%)` : ""}`,
      ].join("\n"),
    );
  });

  it("checks every file of src, strictly, as its CI does", async () => {
    const { code, printed } = await runCommand(checkCommand, ["--v0-compatible", "--strict", src]);
    expect(printed).toBe("142 files checked without errors (strict)");
    expect(code).toBe(0);
  });

  it.each(folders)("tests %s", { timeout: 120_000 }, async (folder) => {
    const dir = path.join(src, folder);
    const files = (await readdir(dir)).filter((f) => f.endsWith(".rego")).map((f) => path.join(dir, f));
    const inputs = await loadPolicyInputs(files.sort(), { bundles: false });
    // Unoptimized builds: the same results, built in a third of the time.
    const run = await runTests(inputs.sources, inputs.data, { regoVersion: 0, optimize: false });
    if (run.errors) {
      // A folder that does not compile fails all of its tests (counted as its `test_` lines
      // when it does not even parse).
      const { modules, errors } = parseModules(inputs.sources, { regoVersion: 0 });
      const written = inputs.sources.reduce((n, s) => n + (s.source.match(/^test_/gm)?.length ?? 0), 0);
      results.set(folder, {
        passed: 0,
        total: errors.length > 0 ? written : discoverTests(modules).tests.length,
      });
      console.log(`${folder}:\n  ${run.errors.map((e) => e.message).join("\n  ")}`);
      return;
    }
    const passed = run.results.filter((r) => r.status === "PASS").length;
    results.set(folder, { passed, total: run.results.length });
  });

  it("passes at least the floor's share of the tests", () => {
    expect(results.size).toBe(folders.length);
    const passed = [...results.values()].reduce((n, r) => n + r.passed, 0);
    const total = [...results.values()].reduce((n, r) => n + r.total, 0);
    expect(passed).toBeGreaterThanOrEqual(FLOOR.passed);
    expect(passed / total).toBeGreaterThanOrEqual(FLOOR.passed / FLOOR.of);
  });
});
