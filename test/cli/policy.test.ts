import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { loadPolicy } from "@open-policy-agent/opa-wasm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { readBundle } from "../../src/rego/bundle/index.ts";
import { moduleBuiltins } from "../../src/rego/policy.ts";
import { Wasm } from "../../src/rego/wasm/host.ts";
import { repoRoot } from "../support/paths.ts";
import { writ, writeFiles, writInProcess } from "../support/writ-cli.ts";

const policy = `package authz

default allow := false

allow if input.user in data.roles.admins

decision := {"allow": allow, "user": input.user}

owner(resource) := data.owners[resource]

can_edit if owner(input.resource) == input.user
`;

const passingTests = `package authz_test

import data.authz

test_admin_is_allowed if {
	authz.allow with input as {"user": "alice"}
}

test_guest_is_denied if {
	not authz.allow with input as {"user": "mallory"}
}

test_owner_can_edit_with_a_mocked_function if {
	authz.can_edit with authz.owner as fake_owner with input as {"user": "dave", "resource": "doc"}
}

fake_owner(_) := "dave"

test_data_is_merged_at_its_folder if {
	data.owners.readme == "alice"
}

todo_test_not_written_yet if false
`;

const failingTests = `package authz_test

import data.authz

test_admin_is_allowed if authz.allow with input as {"user": "alice"}

test_guest_is_allowed if authz.allow with input as {"user": "mallory"}

# Two tests with one name run apart, as in opa test: the second cannot hide behind the first.
test_twice if true

test_twice if false
`;

let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "writ-cli-"));
  await writeFiles(root, {
    "policy/authz/policy.rego": policy,
    "policy/authz/policy_test.rego": passingTests,
    "policy/roles/data.json": JSON.stringify({ admins: ["alice"] }),
    "policy/owners/data.yaml": "readme: alice\n",
    "failing/policy.rego": policy,
    "failing/policy_test.rego": failingTests,
    "failing/roles/data.json": JSON.stringify({ admins: ["alice"] }),
    "input.json": JSON.stringify({ user: "alice" }),
    "runtime/runtime.rego": "package rt\n\nregion := opa.runtime().env.WRIT_TEST_REGION\n",
    "runtime/runtime_test.rego":
      'package rt_test\n\nimport data.rt\n\ntest_region if rt.region == "eu-west"\n\ntest_version if opa.runtime().version != ""\n',
    "broken-syntax/bad.rego": "package bad\n\nallow if {\n\tinput.x ==\n}\n",
    "check-ok/ok.rego": "package ok\n\nimport data.lib\n\nf(x) := x + 1\n\np := f(lib.n)\n",
    "check-opa/bad.rego":
      "package bad\n\nimport data.a\nimport data.b.a\n\np if any([a.x])\n\nq := data.nothing.f(1)\n",
    "check-strict/loose.rego":
      "package loose\n\nimport data.unused\n\nf(x, y) := y\n\np if {\n\tz := 1\n\tf(1, 2) == 2\n}\n",
    "broken-compile/bad.rego":
      "package bad\n\nallow if {\n\tx := 1\n\tx := 2\n}\n\np if no_such_function(1)\n",
  });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("writ policy build and eval", () => {
  // Through the real binary, as a shell runs it; the other cases run the command in this process
  // (writInProcess: the same main(), without seconds of node start-up each).
  it("builds a bundle, then evaluates it", async () => {
    const built = await writ(
      ["policy", "build", "policy", "-e", "authz/decision", "-e", "data.authz.allow"],
      root,
    );
    expect(built.stderr).toBe("");
    expect(built.code).toBe(0);
    expect(built.stdout.trim()).toMatch(
      /^bundle\.tar\.gz: [\d.]+ KiB, entrypoints authz\/decision, authz\/allow, revision [0-9a-f]{64}$/,
    );
    const bundle = await readBundle(await readFile(path.join(root, "bundle.tar.gz")));
    expect(bundle.data).toEqual({ roles: { admins: ["alice"] }, owners: { readme: "alice" } });
    expect(bundle.sources.map((s) => s.file).sort()).toEqual([
      "/authz/policy.rego",
      "/authz/policy_test.rego",
    ]);

    const evaluated = await writ(
      ["policy", "eval", "-d", "bundle.tar.gz", "-i", "input.json", "data.authz.decision"],
      root,
    );
    expect(evaluated.stderr).toBe("");
    expect(evaluated.code).toBe(0);
    expect(JSON.parse(evaluated.stdout)).toEqual([{ result: { allow: true, user: "alice" } }]);
  });

  it("writes the bundle where -o says, with the revision -r gives", async () => {
    const run = await writInProcess(
      ["policy", "build", "policy", "-e", "authz/allow", "-o", "out/b.tar.gz", "-r", "release-1"],
      root,
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("revision release-1");
    expect(existsSync(path.join(root, "out/b.tar.gz"))).toBe(true);
  });

  it("meters the module it builds, unless --no-budget: then a stock OPA SDK loads it with no host", async () => {
    const moduleOf = async (file: string) => {
      const wasm = (await readBundle(await readFile(path.join(root, file)))).wasm;
      if (wasm === undefined) throw new Error(`${file} holds no module`);
      return wasm;
    };
    for (const [file, flags] of [
      ["metered.tar.gz", []],
      ["portable.tar.gz", ["--no-budget"]],
    ] as const) {
      const run = await writInProcess(
        ["policy", "build", "policy", "-e", "authz/allow", "-o", file, ...flags],
        root,
      );
      expect(run.code).toBe(0);
    }
    expect(moduleBuiltins(new Wasm.Module(await moduleOf("metered.tar.gz")))).toContain("writ.$budget");
    const portable = await moduleOf("portable.tar.gz");
    expect(moduleBuiltins(new Wasm.Module(portable))).toEqual([]);
    const stock = await loadPolicy(portable);
    stock.setData({ roles: { admins: ["alice"] }, owners: { readme: "alice" } });
    expect(stock.evaluate({ user: "alice" }, "authz/allow")).toEqual([{ result: true }]);
  });

  it("evaluates queries against a source folder", async () => {
    const ref = await writInProcess(
      ["policy", "eval", "-d", "policy", "-i", "input.json", "data.authz.allow"],
      root,
    );
    expect(ref.code).toBe(0);
    expect(JSON.parse(ref.stdout)).toEqual([{ result: true }]);

    const bindings = await writInProcess(
      ["policy", "eval", "--data", "policy", "some name in data.roles.admins"],
      root,
    );
    expect(bindings.code).toBe(0);
    expect(JSON.parse(bindings.stdout)).toEqual([{ name: "alice" }]);

    const undefinedResult = await writInProcess(
      ["policy", "eval", "-d", "policy", "data.authz.nothing_here"],
      root,
    );
    expect(undefinedResult.code).toBe(0);
    expect(JSON.parse(undefinedResult.stdout)).toEqual([]);
  });

  it("stops at a failing builtin with --strict-builtin-errors, where it is otherwise undefined", async () => {
    const query = 'x := to_number("ten")';
    const lenient = await writInProcess(["policy", "eval", "-d", "policy", query], root);
    expect(lenient.code).toBe(0);
    expect(JSON.parse(lenient.stdout)).toEqual([]);
    const strict = await writInProcess(
      ["policy", "eval", "--strict-builtin-errors", "-d", "policy", query],
      root,
    );
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain(
      'eval_builtin_error: to_number: strconv.ParseFloat: parsing "ten": invalid syntax',
    );
  });

  it("shows the process's environment to opa.runtime(), as opa eval does", async () => {
    const run = await writInProcess(["policy", "eval", "-d", "runtime", "data.rt.region"], root, {
      WRIT_TEST_REGION: "eu-west",
    });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual([{ result: "eu-west" }]);
  });

  it("refuses an entrypoint that names nothing", async () => {
    const run = await writInProcess(["policy", "build", "policy", "-e", "authz/alow"], root);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("no rule, package or data at data.authz.alow");
  });
});

describe("writ policy test", () => {
  it("passes a passing suite (with input and function mocks) and exits 0 (2 for its skipped test without -z)", async () => {
    const run = await writInProcess(["policy", "test", "-z", "policy"], root);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^data\.authz_test\.test_admin_is_allowed: PASS \([\d.]+ms\)$/m);
    expect(run.stdout).toMatch(/^data\.authz_test\.test_guest_is_denied: PASS/m);
    expect(run.stdout).toMatch(/^data\.authz_test\.test_owner_can_edit_with_a_mocked_function: PASS/m);
    expect(run.stdout).toMatch(/^data\.authz_test\.test_data_is_merged_at_its_folder: PASS/m);
    expect(run.stdout).toMatch(/^data\.authz_test\.todo_test_not_written_yet: SKIPPED$/m);
    expect(run.stdout).toMatch(/^PASS: 4\/5$/m);
    expect(run.stdout).toMatch(/^SKIPPED: 1\/5$/m);
    expect(run.stdout).toMatch(/^compile [\d.]+m?s \(parse .*\), evaluation [\d.]+m?s \(4 tests\)$/m);
    // As opa test: a skipped test is not a pass unless -z says so.
    expect((await writInProcess(["policy", "test", "policy"], root)).code).toBe(2);
  });

  it("fails a failing suite, names the failing test and exits 2 (as opa test)", async () => {
    const run = await writInProcess(["policy", "test", "failing"], root);
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(/^data\.authz_test\.test_admin_is_allowed: PASS/m);
    expect(run.stdout).toMatch(/^data\.authz_test\.test_guest_is_allowed: FAIL/m);
    expect(run.stdout).toMatch(/^data\.authz_test\.test_twice: PASS/m);
    expect(run.stdout).toMatch(/^data\.authz_test\.test_twice#01: FAIL/m);
    expect(run.stdout).toMatch(/^PASS: 2\/4$/m);
    expect(run.stdout).toMatch(/^FAIL: 2\/4$/m);
  });

  it("reports coverage: the rules no test reached, as text and in opa test --coverage's JSON", async () => {
    const run = await writInProcess(["policy", "test", "policy", "-z", "--coverage"], root);
    expect(run.code).toBe(0);
    const file = path.join("policy", "authz", "policy.rego");
    // decision (line 7) is never evaluated; owner (line 9) is always replaced by a mock.
    expect(run.stdout).toContain(
      `rules no test reached:\n  ${file}:7: data.authz.decision\n  ${file}:9: data.authz.owner\n`,
    );
    expect(run.stdout).toMatch(
      new RegExp(`^ {2}${file.replaceAll(".", "\\.")}: [\\d.]+%, not covered: lines 7, 9$`, "m"),
    );
    const json = await writInProcess(
      ["policy", "test", "policy", "-z", "--coverage", "--format", "json"],
      root,
    );
    expect(json.code).toBe(0);
    const report = z
      .object({
        files: z.record(
          z.string(),
          z
            .object({
              covered: z.array(
                z.object({ start: z.object({ row: z.number() }), end: z.object({ row: z.number() }) }),
              ),
              not_covered: z.array(
                z.object({ start: z.object({ row: z.number() }), end: z.object({ row: z.number() }) }),
              ),
              covered_lines: z.number(),
              not_covered_lines: z.number(),
              coverage: z.number(),
            })
            .partial({ covered: true, not_covered: true }),
        ),
        covered_lines: z.number(),
        not_covered_lines: z.number(),
        coverage: z.number(),
      })
      .parse(JSON.parse(json.stdout));
    expect(report.files[file]?.not_covered).toEqual([
      { start: { row: 7 }, end: { row: 7 } },
      { start: { row: 9 }, end: { row: 9 } },
    ]);
    expect(report.files[file]?.covered).toEqual([
      { start: { row: 3 }, end: { row: 3 } },
      { start: { row: 5 }, end: { row: 5 } },
      { start: { row: 11 }, end: { row: 11 } },
    ]);
    const bad = await writInProcess(["policy", "test", "policy", "--coverage", "--format", "xml"], root);
    expect(bad.code).toBe(2);
  });

  it("shows the process's environment to opa.runtime(), as opa test does", async () => {
    const run = await writInProcess(["policy", "test", "runtime"], root, { WRIT_TEST_REGION: "eu-west" });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("PASS: 2/2");
  });

  it("selects tests with --run and groups them by file with -v", async () => {
    const run = await writInProcess(["policy", "test", "-v", "--run", "guest", "failing"], root);
    expect(run.code).toBe(2);
    expect(run.stdout).toContain(`${path.join("failing", "policy_test.rego")}:`);
    expect(run.stdout).not.toContain("test_admin_is_allowed");
    expect(run.stdout).toMatch(/FAIL: 1\/1/);
  });
});

describe("writ policy check", () => {
  it("compiles as opa check does: every error OPA's way, exit 1", async () => {
    const run = await writInProcess(["policy", "check", "check-opa", "broken-compile"], root);
    expect(run.code).toBe(1);
    expect(run.stderr.split("\n").filter((l) => /^\S+\.rego:/.test(l))).toEqual([
      "broken-compile/bad.rego:5:2: rego_compile_error: var x assigned above",
      "broken-compile/bad.rego:8:6: rego_type_error: undefined function no_such_function",
      "check-opa/bad.rego:4:1: rego_compile_error: import must not shadow import data.a",
      "check-opa/bad.rego:6:6: rego_type_error: deprecated built-in function calls in expression: any",
      "check-opa/bad.rego:8:6: rego_type_error: undefined function data.nothing.f",
    ]);
    expect(run.stderr).toContain("5 errors in 2 files");
  });

  it("passes a clean folder with exit 0, and adds strict mode's errors with --strict", async () => {
    const ok = await writInProcess(["policy", "check", "--strict", "check-ok"], root);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("1 file checked without errors (strict)");
    const lenient = await writInProcess(["policy", "check", "check-strict"], root);
    expect(lenient.code).toBe(0);
    const strict = await writInProcess(["policy", "check", "-S", "check-strict"], root);
    expect(strict.code).toBe(1);
    expect(strict.stderr.split("\n").filter((l) => /^\S+\.rego:/.test(l))).toEqual([
      "check-strict/loose.rego:3:1: rego_compile_error: import data.unused unused",
      "check-strict/loose.rego:5:1: rego_compile_error: unused argument x. (hint: use _ (wildcard variable) instead)",
      "check-strict/loose.rego:8:2: rego_compile_error: assigned var z unused",
    ]);
  });
});

describe("writ policy errors", () => {
  it("prints parse errors OPA's way and exits 1", async () => {
    for (const sub of [
      ["check", "broken-syntax"],
      ["build", "broken-syntax", "-e", "bad/allow"],
      ["test", "broken-syntax"],
      ["eval", "-d", "broken-syntax", "data.bad.allow"],
    ]) {
      const run = await writInProcess(["policy", ...sub], root);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^broken-syntax\/bad\.rego:5:1: rego_parse_error: .+$/m);
    }
  });

  it("prints compile errors OPA's way and exits 1", async () => {
    const run = await writInProcess(
      ["policy", "build", "broken-compile", "-e", "bad/allow", "-o", "broken.tar.gz"],
      root,
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^broken-compile\/bad\.rego:5:2: rego_compile_error: var x assigned above$/m);
    expect(run.stderr).toMatch(
      /^broken-compile\/bad\.rego:8:6: rego_type_error: undefined function no_such_function$/m,
    );
    expect(existsSync(path.join(root, "broken.tar.gz"))).toBe(false);
  });

  it("rejects unknown flags with exit code 2 and answers --help", async () => {
    const unknown = await writInProcess(
      ["policy", "build", "policy", "-e", "authz/allow", "--optimise"],
      root,
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("writ policy build: unknown option --optimise");
    expect(unknown.stderr).toContain("writ policy build --help");

    for (const sub of ["check", "build", "eval", "test", "capabilities"]) {
      const help = await writInProcess(["policy", sub, "--help"], root);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^usage: writ policy ${sub}`));
    }
  });

  it("says what is missing", async () => {
    const noEntrypoint = await writInProcess(["policy", "build", "policy"], root);
    expect(noEntrypoint.code).toBe(2);
    expect(noEntrypoint.stderr).toContain("name at least one entrypoint");
    const noQuery = await writInProcess(["policy", "eval", "-d", "policy"], root);
    expect(noQuery.code).toBe(2);
    const missing = await writInProcess(["policy", "eval", "-d", "nowhere", "data.x"], root);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("cannot read nowhere: no such file or folder");
  });

  it("says when a bundle is damaged", async () => {
    // Through the real binary: what the shell sees is a message and exit code 1, never a stack.
    const bundle = gzipSync(Buffer.alloc(64 * 1024, 7));
    await writeFile(path.join(root, "truncated.tar.gz"), bundle.subarray(0, bundle.byteLength / 2));
    const run = await writ(["policy", "eval", "-d", "truncated.tar.gz", "data.authz.allow"], root);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/truncated\.tar\.gz: the bundle is truncated/);
  });
});

describe("writ policy capabilities", () => {
  it("prints the builtin catalog as JSON", async () => {
    const run = await writInProcess(["policy", "capabilities"], root);
    expect(run.code).toBe(0);
    const list: unknown = JSON.parse(run.stdout);
    expect(list).toContainEqual({ name: "count", arity: 1, implementation: "native" });
    expect(list).toContainEqual({
      name: "http.send",
      arity: 1,
      implementation: "unavailable",
      reason: "a policy decision must not wait on the network; fetch the data into the input or data instead",
    });
    expect(list).toContainEqual({ name: "io.jwt.decode_verify", arity: 2, implementation: "host" });
  });

  it("lists every builtin of OPA's list, all but the network ones callable", async () => {
    const run = await writInProcess(["policy", "capabilities"], root);
    const list = z
      .array(z.object({ name: z.string(), implementation: z.string() }))
      .parse(JSON.parse(run.stdout));
    expect(list.length).toBe(205);
    expect(list.filter((b) => b.implementation === "unavailable").map((b) => b.name)).toEqual([
      "http.send",
      "net.lookup_ip_addr",
      "providers.aws.sign_req",
    ]);
  });

  it("prints OPA's capabilities format with --format opa, without what Writ cannot run", async () => {
    const run = await writInProcess(["policy", "capabilities", "--format", "opa"], root);
    expect(run.code).toBe(0);
    const caps = z
      .object({
        builtins: z.array(
          z.object({ name: z.string(), decl: z.looseObject({ type: z.literal("function") }) }),
        ),
        future_keywords: z.array(z.string()),
        features: z.array(z.string()),
        wasm_abi_versions: z.array(z.object({ version: z.number(), minor_version: z.number() })),
      })
      .parse(JSON.parse(run.stdout));
    const names = caps.builtins.map((b) => b.name);
    expect(names).toContain("print");
    expect(names).toContain("regex.match");
    expect(names).not.toContain("http.send");
    expect(caps.builtins.find((b) => b.name === "count")?.decl).toMatchObject({ result: { type: "number" } });
    expect(caps.features).toEqual(["keywords_in_refs", "rego_v1", "template_strings"]);
    expect(caps.future_keywords).toEqual(["and", "not", "or"]);
    const bad = await writInProcess(["policy", "capabilities", "--format", "yaml"], root);
    expect(bad.code).toBe(2);
  });
});

describe("the sample policies", () => {
  it("pass their own tests with writ policy test", async () => {
    const run = await writInProcess(["policy", "test", "policies", "--coverage"], repoRoot);
    expect(run.stdout).toMatch(/^PASS: 38\/38$/m);
    expect(run.code).toBe(0);
    // Every rule but the default decision (the else chain always decides) is reached.
    expect(run.stdout).toMatch(
      /^rules no test reached:\n {2}policies\/writ\/decision\.rego:\d+: default data\.writ\.decision\n?$/m,
    );
  });
});
