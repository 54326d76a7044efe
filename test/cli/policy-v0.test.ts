/**
 * `--v0-compatible` on `writ policy check|test|eval|build` (OPA's flag): the sources (and the
 * query) are Rego v0; a bundle built so says `rego_version: 0`, and reading it back honours that.
 * The commands run in process.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCommand } from "../../src/cli/policy/build.ts";
import { checkCommand } from "../../src/cli/policy/check.ts";
import { evalCommand } from "../../src/cli/policy/eval.ts";
import { testCommand } from "../../src/cli/policy/test.ts";
import { readBundle } from "../../src/rego/bundle/index.ts";
import { runCommand } from "../support/command.ts";

/** Rego v0: bodies without `if`, a partial set rule `p[x] { … }`, `contains` the builtin. */
const policy = `package authz

default allow = false

allow {
  admins[input.user]
}

admins[name] {
  name := data.users[_]
  contains(name, "admin")
}
`;

const tests = `package authz

test_admin_allowed {
  allow with input as {"user": "root-admin"} with data.users as ["root-admin", "bob"]
}

test_others_denied {
  not allow with input as {"user": "bob"} with data.users as ["root-admin", "bob"]
}
`;

let root: string;
let folder: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "writ-v0-"));
  folder = path.join(root, "policy");
  await mkdir(folder);
  await writeFile(path.join(folder, "authz.rego"), policy);
  await writeFile(path.join(folder, "authz_test.rego"), tests);
  await writeFile(path.join(folder, "data.json"), JSON.stringify({ users: ["ops-admin", "eve"] }));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("writ policy … --v0-compatible", () => {
  it("check: parses Rego v0, which is an error without the flag", async () => {
    expect(await runCommand(checkCommand, ["--v0-compatible", folder])).toEqual({
      code: 0,
      printed: "2 files checked without errors",
    });
    const v1 = await runCommand(checkCommand, [folder]);
    expect(v1.code).toBe(1);
    expect(v1.printed).toContain(
      "authz.rego:5:1: rego_parse_error: `if` keyword is required before rule body",
    );
  });

  it("test: runs the v0 tests", async () => {
    const run = await runCommand(testCommand, ["--v0-compatible", folder]);
    expect(run.printed).toContain("PASS: 2/2");
    expect(run.code).toBe(0);
    expect((await runCommand(testCommand, [folder])).code).toBe(1);
  });

  it("eval: reads the sources and the query as Rego v0", async () => {
    const run = await runCommand(evalCommand, [
      "--v0-compatible",
      "-d",
      folder,
      "-i",
      await inputFile({ user: "ops-admin" }),
      "in := data.authz.allow",
    ]);
    expect(JSON.parse(run.printed)).toEqual([{ in: true }]);
  });

  it("build: writes rego_version 0, which reading the bundle honours", async () => {
    const bundle = path.join(root, "bundle.tar.gz");
    const built = await runCommand(buildCommand, [
      "--v0-compatible",
      folder,
      "-e",
      "authz/allow",
      "-o",
      bundle,
    ]);
    expect(built.code).toBe(0);
    const read = await readBundle(await readFile(bundle));
    expect(read.manifest.rego_version).toBe(0);
    expect(read.sources.map((s) => [s.file, s.regoVersion])).toEqual([
      ["/authz.rego", 0],
      ["/authz_test.rego", 0],
    ]);
    // A query that is no entrypoint compiles the sources the bundle carries, in its version.
    const run = await runCommand(evalCommand, ["-d", bundle, "x := data.authz.admins"]);
    expect(JSON.parse(run.printed)).toEqual([{ x: ["ops-admin"] }]);
  });
});

async function inputFile(input: unknown): Promise<string> {
  const file = path.join(root, "input.json");
  await writeFile(file, JSON.stringify(input));
  return file;
}
