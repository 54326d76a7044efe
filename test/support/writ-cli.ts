/** Running the real `writ` binary (bin/writ.mjs, by node) in a folder, for end-to-end CLI tests. */
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { format } from "node:util";
import { vi } from "vitest";
import { repoRoot } from "./paths.ts";

const bin = path.join(repoRoot, "bin/writ.mjs");

export interface WritRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `writ <args>` in `cwd`, with `env` added to this process's environment (and `nodeArgs`,
 * such as `--import <hooks>`, given to node before the script; `stdin`, when given, as its input).
 */
export function writ(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
  stdin?: string,
): Promise<WritRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, bin, ...args], {
      cwd,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? "");
  });
}

/** Writes `files` (paths relative to `root`) with their folders. */
export async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(root, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
}

/**
 * Runs `writ <args>` as `bin/writ.mjs` would, but in this process: `main` from src/cli/main.ts
 * with `cwd` as the working folder and `env` added to the environment, what it prints captured.
 * A fresh node process per command costs seconds of start-up (tsx, the compiler) that the
 * behaviour under test does not need; tests of the binary itself (start-up, stack traces, exit
 * codes as the shell sees them) use `writ`.
 */
export async function writInProcess(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<WritRun> {
  const { main } = await import("../../src/cli/main.ts");
  const stdout: string[] = [];
  const stderr: string[] = [];
  const printer =
    (to: string[]) =>
    (...values: unknown[]) => {
      to.push(`${format(...values)}\n`);
    };
  const writer = (to: string[]) => (chunk: string | Uint8Array) => {
    to.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    return true;
  };
  const spies = [
    vi.spyOn(console, "log").mockImplementation(printer(stdout)),
    vi.spyOn(console, "info").mockImplementation(printer(stdout)),
    vi.spyOn(console, "error").mockImplementation(printer(stderr)),
    vi.spyOn(console, "warn").mockImplementation(printer(stderr)),
    vi.spyOn(process.stdout, "write").mockImplementation(writer(stdout)),
    vi.spyOn(process.stderr, "write").mockImplementation(writer(stderr)),
  ];
  const previousCwd = process.cwd();
  const previousEnv = new Map(Object.keys(env).map((name) => [name, process.env[name]]));
  process.chdir(cwd);
  Object.assign(process.env, env);
  try {
    const code = await main(args);
    return { code, stdout: stdout.join(""), stderr: stderr.join("") };
  } finally {
    for (const spy of spies) spy.mockRestore();
    process.chdir(previousCwd);
    for (const [name, value] of previousEnv) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}
