/**
 * `writ policy fmt` end to end: the real `writ` binary on files in temporary folders, with
 * `opa fmt`'s modes (print, -w, -l, -d, --fail and its alias --check), `--v0-v1` and
 * `--v0-compatible`, and exit codes.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type WritRun, writ as writCommand, writInProcess } from "../support/writ-cli.ts";

/**
 * `writ policy fmt <args>`, run in this process; with `stdin`, through the real binary with it as
 * its input (the in-process runner has no standard input to give).
 */
function writ(args: string[], cwd: string, stdin?: string): Promise<WritRun> {
  const argv = ["policy", "fmt", ...args];
  return stdin === undefined ? writInProcess(argv, cwd) : writCommand(argv, cwd, {}, [], stdin);
}

const formatted = "package authz\n\ndefault allow := false\n\nallow if input.admin\n";
const unformatted = "package authz\n\ndefault allow = false\nallow = true if { input.admin }\n";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "writ-fmt-"));
  await mkdir(path.join(dir, "policy/nested"), { recursive: true });
  await writeFile(path.join(dir, "policy/a.rego"), formatted);
  await writeFile(path.join(dir, "policy/nested/b.rego"), unformatted);
  await writeFile(path.join(dir, "policy/z.rego"), unformatted);
  await writeFile(path.join(dir, "policy/notes.txt"), unformatted);
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("writ policy fmt", () => {
  it("prints a file formatted and leaves it alone", async () => {
    const run = await writ(["policy/nested/b.rego"], dir);
    expect(run).toEqual({ code: 0, stdout: formatted, stderr: "" });
    expect(await readFile(path.join(dir, "policy/nested/b.rego"), "utf8")).toBe(unformatted);
  });

  it("formats standard input when no path is given", async () => {
    const run = await writ([], dir, unformatted);
    expect(run).toEqual({ code: 0, stdout: formatted, stderr: "" });
  });

  it("lists the files whose formatting differs, in opa fmt's walk order", async () => {
    const run = await writ(["-l", "policy"], dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${path.join("policy/nested/b.rego")}\n${path.join("policy/z.rego")}\n`);
  });

  it("rewrites the files with -w, after which nothing is listed", async () => {
    expect((await writ(["--write", "policy"], dir)).code).toBe(0);
    expect(await readFile(path.join(dir, "policy/z.rego"), "utf8")).toBe(formatted);
    expect(await readFile(path.join(dir, "policy/notes.txt"), "utf8")).toBe(unformatted);
    expect(await writ(["-l", "policy"], dir)).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  it("prints a unified diff with -d", async () => {
    const run = await writ(["-d", "policy/z.rego"], dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        "--- a/policy/z.rego",
        "+++ b/policy/z.rego",
        "@@ -1,4 +1,5 @@",
        " package authz",
        " ",
        "-default allow = false",
        "-allow = true if { input.admin }",
        "+default allow := false",
        "+",
        "+allow if input.admin",
        "",
      ].join("\n"),
    );
  });

  it.each([["--fail"], ["--check"]])("%s exits 2 at the first file that would change", async (flag) => {
    const clean = await writ([flag, "policy/a.rego"], dir);
    expect(clean).toEqual({ code: 0, stdout: formatted, stderr: "" });
    const dirty = await writ([flag, "policy"], dir);
    expect(dirty.code).toBe(2);
    expect(dirty.stdout).toBe(formatted);
    expect(dirty.stderr).toContain(`${path.join("policy/nested/b.rego")} is not formatted`);
    const listed = await writ(["-l", flag, "policy"], dir);
    expect(listed.code).toBe(2);
    expect(listed.stdout).toBe(`${path.join("policy/nested/b.rego")}\n`);
  });

  it("exits 2 with the parse errors of a file it cannot format", async () => {
    await writeFile(path.join(dir, "broken.rego"), "package p\n\nallow if {\n");
    const run = await writ(["broken.rego"], dir);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("broken.rego:");
    expect(run.stderr).toContain("rego_parse_error");
  });

  it("exits 1 for a path that does not exist, and 2 for usage errors", async () => {
    const missing = await writ(["nowhere"], dir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("cannot read nowhere");
    expect((await writ(["--frobnicate", "policy"], dir)).code).toBe(2);
  });

  it("--v0-v1 -w rewrites Rego v0 as v1, whose tests writ policy test then passes without --v0-compatible", async () => {
    await mkdir(path.join(dir, "v0"));
    await writeFile(
      path.join(dir, "v0/authz.rego"),
      'package authz\n\ndefault allow = false\n\nallow { admins[input.user] }\n\nadmins[name] {\n  name := data.users[_]\n  contains(name, "admin")\n}\n',
    );
    await writeFile(
      path.join(dir, "v0/authz_test.rego"),
      'package authz\n\ntest_admin { allow with input as {"user": "root-admin"} with data.users as ["root-admin"] }\n',
    );
    expect(await writ(["--v0-v1", "-l", "v0"], dir)).toEqual({
      code: 0,
      stdout: `${path.join("v0/authz.rego")}\n${path.join("v0/authz_test.rego")}\n`,
      stderr: "",
    });
    expect((await writ(["--v0-v1", "-w", "v0"], dir)).code).toBe(0);
    expect(await readFile(path.join(dir, "v0/authz.rego"), "utf8")).toBe(
      'package authz\n\nimport rego.v1\n\ndefault allow := false\n\nallow if admins[input.user]\n\nadmins contains name if {\n\tname := data.users[_]\n\tcontains(name, "admin")\n}\n',
    );
    // Formatted for v1 as well: plain writ policy fmt leaves the converted files alone.
    expect(await writ(["-l", "v0"], dir)).toEqual({ code: 0, stdout: "", stderr: "" });
    const test = await writInProcess(["policy", "test", "v0"], dir);
    expect(test.code).toBe(0);
    expect(test.stdout).toContain("PASS: 1/1");
  });

  it("--v0-v1 exits 2 for a v0 module v1 cannot take, saying why", async () => {
    await writeFile(path.join(dir, "kw.rego"), "package p\n\nif[x] { x := 1 }\n");
    const run = await writ(["--v0-v1", "kw.rego"], dir);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("kw.rego:3:1: rego_parse_error: if keyword cannot be used for rule name");
  });

  it("--v0-compatible formats Rego v0 as v0", async () => {
    const run = await writ(
      ["--v0-compatible"],
      dir,
      "package p\n\ndefault allow = false\nallow { input.admin }\n",
    );
    expect(run).toEqual({
      code: 0,
      stdout: "package p\n\ndefault allow = false\n\nallow {\n\tinput.admin\n}\n",
      stderr: "",
    });
  });
});
