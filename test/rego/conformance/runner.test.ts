import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "../../../src/rego/conformance/main.ts";
import { conformanceCasesDir, hasConformanceCases, repoRoot } from "../../support/paths.ts";

const run = promisify(execFile);
const cli = path.join(repoRoot, "src/rego/conformance/cli.ts");

/** The runner's command in this process, with what it printed. */
async function conformance(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((line: unknown) => void out.push(String(line)));
  const error = vi.spyOn(console, "error").mockImplementation((line: unknown) => void err.push(String(line)));
  try {
    const code = await main(args);
    return { code, stdout: out.map((l) => `${l}\n`).join(""), stderr: err.map((l) => `${l}\n`).join("") };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

/**
 * `npm run conformance` as a command: a child process running the sources through tsx, with
 * binaryen imported natively first (as package.json's script does: through tsx's loader its 13 MB
 * bundle takes tens of seconds to load).
 */
async function conformanceCommand(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, ["--import", "binaryen", "--import", "tsx", cli, ...args], {
    cwd: repoRoot,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      stdout: error.stdout ?? "",
      stderr: error.stderr ?? "",
    }),
  );
}

describe("conformance runner, parse stage", () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "writ-conformance-"));
    await mkdir(path.join(dir, "alpha"));
    await mkdir(path.join(dir, "beta/nested"), { recursive: true });
    await writeFile(
      path.join(dir, "alpha/cases.yaml"),
      [
        "cases:",
        "  - note: alpha/ok",
        "    query: data.test.p = x",
        "    modules:",
        "      - |",
        "        package test",
        "        p := 1",
        "    want_result: [{x: 1}]",
        "  - note: alpha/broken module",
        "    query: data.test.p = x",
        "    modules:",
        "      - |",
        "        package test",
        "        p := }",
        "    want_result: [{x: 1}]",
        "  - note: alpha/expects parse error",
        "    query: data.test.p = x",
        "    modules:",
        "      - |",
        "        package test",
        "        p { true }",
        "    want_error_code: rego_parse_error",
      ].join("\n"),
    );
    await writeFile(
      path.join(dir, "beta/nested/cases.yaml"),
      "cases:\n  - note: beta/ok\n    query: 'x := {1, 2}'\n    modules: []\n    input_term: '{\"a\": set()}'\n",
    );
    await writeFile(path.join(dir, "beta/not-cases.yaml"), "hello: world\n");
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("counts per top-level folder, prints the closing line and writes the JSON report", async () => {
    const jsonFile = path.join(dir, "report.json");
    const result = await conformance([dir, "--stage", "parse", "--json", jsonFile]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^3 passed, 2 failed, 0 skipped$/m);

    const report: unknown = JSON.parse(await readFile(jsonFile, "utf8"));
    expect(report).toMatchObject({
      total: 5,
      passed: 3,
      failed: 2,
      skipped: 0,
      by_dir: { alpha: { passed: 2, failed: 1, skipped: 0 }, beta: { passed: 1, failed: 1, skipped: 0 } },
    });
    const failures = (report as { failures: Array<{ file: string; note: string; reason: string }> }).failures;
    expect(failures).toHaveLength(2);
    const broken = failures.find((f) => f.note === "alpha/broken module");
    expect(broken?.file).toBe(path.join("alpha", "cases.yaml"));
    expect(broken?.reason).toMatch(/^module-0\.rego:2:6: rego_parse_error: /);
    expect(failures.find((f) => f.file === path.join("beta", "not-cases.yaml"))?.reason).toMatch(
      /not a conformance case file/,
    );
  });

  it("fails with --min-pass when the pass rate is below it", async () => {
    const result = await conformance([dir, "--min-pass", "90"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/pass rate 60\.0% is below --min-pass 90%/);
  });

  it("explains bad usage", async () => {
    const missing = await conformance([path.join(dir, "nope")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/does not exist/);
    // As a command: the exit code and the usage on standard error.
    const noFolder = await conformanceCommand([]);
    expect(noFolder.code).toBe(2);
    expect(noFolder.stderr).toMatch(/usage: npm run conformance/);
  });

  describe.skipIf(!hasConformanceCases)("over OPA's conformance cases", () => {
    it("parses at least 99% of the cases", async () => {
      const jsonFile = path.join(dir, "opa.json");
      const result = await conformance([conformanceCasesDir, "--json", jsonFile, "--min-pass", "99"]);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const report = JSON.parse(await readFile(jsonFile, "utf8")) as { total: number; passed: number };
      expect(report.total).toBeGreaterThan(500);
    });
  });
});
