/**
 * `writ policy … --builtins <module.mjs>` and `writ policy test` as opa test users expect it
 * (--format json, -v with print output, exit codes), end to end through the real binary.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { repoRoot } from "../support/paths.ts";
import { writInProcess as writ, writeFiles } from "../support/writ-cli.ts";

const module = path.join(repoRoot, "test/rego/builtins/fixtures/custom-builtins.mjs");

const policy = `package files

owner := acme.owner_of(input.path)

allow if owner == input.user
`;

const tests = `package files_test

import data.files

test_owner_allowed if {
\tprint("checking", "/srv/app")
\tfiles.allow with input as {"path": "/srv/app", "user": "alice"}
}

test_stranger_denied if {
\tprint("stranger")
\tnot files.allow with input as {"path": "/srv/app", "user": "mallory"}
}

test_keys_are_a_set if is_set(acme.keys({"a": 1}))

test_wrong_owner if files.owner == "bob" with input as {"path": "/srv/app"}

test_conflict if {
\tx := {k: v | some k, v in {"a": 1}; v > 0}
\tconflicting == x
}

conflicting := 1 if true

conflicting := 2 if true
`;

let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "writ-builtins-"));
  await writeFiles(root, {
    "passing/files.rego": policy,
    "passing/files_test.rego": tests.slice(0, tests.indexOf("test_wrong_owner")),
    "mixed/files.rego": policy,
    "mixed/files_test.rego": tests,
    "broken.mjs":
      "export const builtins = [{ name: 'acme.x', decl: { type: 'function', args: [{ type: 'text' }] }, impl: () => 1 }];\n",
  });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("writ policy test with custom builtins", () => {
  it("runs tests calling them, shows print() output under each test with -v, and exits 0", async () => {
    const run = await writ(["policy", "test", "-v", "--builtins", module, "passing"], root);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^data\.files_test\.test_owner_allowed: PASS \([\d.]+ms\)\n {2}at passing\/files_test\.rego:5\n {2}checking \/srv\/app$/m,
    );
    expect(run.stdout).toMatch(/^data\.files_test\.test_stranger_denied: PASS .*\n.*\n {2}stranger$/m);
    expect(run.stdout).toMatch(/^PASS: 3\/3$/m);
    expect(run.stdout).toMatch(/^compile .*, evaluation .* \(3 tests\)$/m);
  });

  it("without the module, names the builtin as an undefined function and exits 1", async () => {
    const run = await writ(["policy", "test", "passing"], root);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "passing/files.rego:3:10: rego_type_error: undefined function acme.owner_of",
    );
  });

  it("reports results in opa test's JSON shape and exits 2 when a test fails or errors", async () => {
    const run = await writ(["policy", "test", "--format", "json", "--builtins", module, "mixed"], root);
    expect(run.code).toBe(2);
    const results = z
      .array(
        z.object({
          location: z.object({ file: z.string(), row: z.number(), col: z.number() }),
          package: z.string(),
          name: z.string(),
          duration: z.number().int(),
          fail: z.boolean().optional(),
          skip: z.boolean().optional(),
          output: z.string().optional(),
          error: z.object({ code: z.string(), message: z.string() }).optional(),
        }),
      )
      .parse(JSON.parse(run.stdout));
    const byName = new Map(results.map((r) => [r.name, r]));
    expect([...byName.keys()]).toEqual([
      "test_owner_allowed",
      "test_stranger_denied",
      "test_keys_are_a_set",
      "test_wrong_owner",
      "test_conflict",
    ]);
    expect(byName.get("test_owner_allowed")).toMatchObject({
      package: "data.files_test",
      location: { file: "mixed/files_test.rego", row: 5, col: 1 },
    });
    expect(Buffer.from(byName.get("test_stranger_denied")?.output ?? "", "base64").toString()).toBe(
      "stranger\n",
    );
    expect(byName.get("test_wrong_owner")?.fail).toBe(true);
    expect(byName.get("test_conflict")?.error?.code).toBe("eval_conflict_error");
    expect(byName.get("test_owner_allowed")?.fail).toBeUndefined();
    // The run's timings go to stderr, so that stdout stays what opa test prints.
    expect(JSON.parse(run.stderr)).toMatchObject({
      timings: { parse_ms: expect.any(Number), compile_ms: expect.any(Number), eval_ms: expect.any(Number) },
    });
  });

  it("refuses a module that declares a builtin wrongly, naming the module and the builtin", async () => {
    const run = await writ(["policy", "test", "--builtins", "broken.mjs", "passing"], root);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^writ policy test: broken\.mjs: acme\.x: decl\.args\.0: /);
    expect(run.stderr).not.toContain("    at ");
  });
});

describe("writ policy eval, build, check and capabilities with custom builtins", () => {
  it("evaluates, and refuses a bundle built with them when they are not given", async () => {
    const evaluated = await writ(
      ["policy", "eval", "--builtins", module, "-d", "passing", 'x := acme.owner_of("/srv/db")'],
      root,
    );
    expect(evaluated.stderr).toBe("");
    expect(JSON.parse(evaluated.stdout)).toEqual([{ x: "bob" }]);

    const built = await writ(
      ["policy", "build", "--builtins", module, "passing", "-e", "files/owner", "-o", "files.tar.gz"],
      root,
    );
    expect(built.code).toBe(0);
    const refused = await writ(["policy", "eval", "-d", "files.tar.gz", "data.files.owner"], root);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "writ policy eval: the bundle was compiled against custom builtin acme.owner_of, which is not loaded",
    );
  });

  it("checks a policy against their declarations and lists them as capabilities", async () => {
    const checked = await writ(["policy", "check", "--builtins", module, "passing"], root);
    expect(checked.stderr).toBe("");
    expect(checked.code).toBe(0);
    const unknown = await writ(["policy", "check", "passing"], root);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("rego_type_error: undefined function acme.owner_of");

    const capabilities = await writ(["policy", "capabilities", "--builtins", module], root);
    const list = z
      .array(z.looseObject({ name: z.string(), implementation: z.string() }))
      .parse(JSON.parse(capabilities.stdout));
    expect(list.find((b) => b.name === "acme.keys")).toEqual({
      name: "acme.keys",
      arity: 1,
      implementation: "custom",
    });
  });
});
