/**
 * Every `writ` command answers --help with its usage and exit 0, and `writ help` lists every
 * option that any command's own --help names (so the overview cannot fall behind a command).
 */
import { describe, expect, it } from "vitest";
import { runWrit as run } from "../support/command.ts";

const commands = [
  ["serve"],
  ["token"],
  ["tools"],
  ["demo"],
  ["config"],
  ["config", "check"],
  ["config", "schema"],
  ["contracts"],
  ["contracts", "import"],
  ["logs"],
  ...["tail", "query", "show", "verify", "export"].map((c) => ["logs", c]),
  ["policy"],
  ...["check", "fmt", "build", "eval", "test", "capabilities", "revisions", "replay"].map((c) => [
    "policy",
    c,
  ]),
];

/** The long options a usage text names (`--config`, `--strict-builtin-errors`…). */
const optionsIn = (text: string) => new Set(text.match(/--[a-z][a-z-]*/g) ?? []);

describe("writ --help", () => {
  it.each(commands)("writ %s … --help prints its usage and exits 0", async (...command) => {
    for (const flag of ["--help", "-h"]) {
      const answer = await run([...command, flag]);
      expect(answer.err).toBe("");
      expect(answer.code).toBe(0);
      expect(answer.out).toMatch(/^usage: writ /);
    }
  });

  it("writ help lists every option of every command, and writ help <command> is its --help", async () => {
    const overview = await run(["help"]);
    expect(overview.code).toBe(0);
    const listed = optionsIn(overview.out);
    const missing: string[] = [];
    for (const command of commands) {
      const help = await run([...command, "--help"]);
      for (const option of optionsIn(help.out)) {
        if (!listed.has(option)) missing.push(`${command.join(" ")} ${option}`);
      }
    }
    expect(missing).toEqual([]);
    expect((await run(["help", "token"])).out).toBe((await run(["token", "--help"])).out);
    expect(await run(["--help"])).toEqual(overview);
  });

  it("answers --version with the package's version, and an unknown command with exit 2", async () => {
    const version = await run(["--version"]);
    expect(version.code).toBe(0);
    expect(version.out).toMatch(/^\d+\.\d+\.\d+/);
    const unknown = await run(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('unknown command "frobnicate"');
  });
});
