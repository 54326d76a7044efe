/**
 * A command that compiles no Rego loads no compiler: `writ token`, `writ --help` and `writ config
 * check` in a checkout answer without binaryen (the compiler's 13 MB code generator) or any module
 * of src/rego/, and `writ policy test`, which compiles, loads binaryen natively (bin/writ.mjs keeps
 * tsx from transforming it) and passes. Seen from outside: the real bin/writ.mjs in a child
 * process, with a loader hook (test/support/resolved-modules.mjs) listing every module it
 * resolved. How fast they start is measured in bench/startup.ts, never asserted here.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/paths.ts";
import { writ, writeFiles } from "../support/writ-cli.ts";

const hooks = path.join(repoRoot, "test/support/resolved-modules.mjs");
let dir: string;
let runs = 0;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "writ-startup-"));
  await writeFiles(dir, {
    "policy/p.rego": "package p\n\nimport rego.v1\n\nallow if input.x == 1\n",
    "policy/p_test.rego":
      'package p_test\n\nimport rego.v1\n\ntest_x if data.p.allow with input as {"x": 1}\n',
  });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `writ <args>` in the temp folder: its answer and the URLs of the modules it resolved. */
async function traced(args: string[]) {
  const list = path.join(dir, `resolved-${runs++}.txt`);
  const run = await writ(args, dir, { WRIT_TEST_RESOLVED_MODULES: list }, ["--import", hooks]);
  const modules = (await readFile(list, "utf8")).split("\n").filter(Boolean);
  return { ...run, modules };
}

const compilerModules = (modules: string[]) => [
  ...new Set(modules.filter((url) => /\/node_modules\/binaryen\/|\/src\/rego\//.test(url))),
];

describe("writ's start in a checkout", () => {
  it("writ token mints a token without loading the compiler", async () => {
    const run = await traced(["token", "--sub", "alice"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(run.modules.some((url) => url.endsWith("/src/cli/token.ts"))).toBe(true);
    expect(compilerModules(run.modules)).toEqual([]);
  });

  it("writ --help and writ config check answer without loading the compiler", async () => {
    const help = await traced(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("usage: writ <command>");
    expect(compilerModules(help.modules)).toEqual([]);
    const check = await traced(["config", "check"]);
    expect(check.code).toBe(0);
    expect(compilerModules(check.modules)).toEqual([]);
  });

  it("writ policy test compiles: it loads binaryen, natively, and passes", async () => {
    const run = await traced(["policy", "test", "policy"]);
    expect(run.stdout).toContain("PASS: 1/1");
    expect(run.code).toBe(0);
    expect(compilerModules(run.modules)).toContainEqual(
      expect.stringMatching(/\/node_modules\/binaryen\/index\.js$/),
    );
  }, 120_000);
});
