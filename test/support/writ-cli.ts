/** Running the real `writ` binary (bin/writ.mjs, by node) in a folder, for end-to-end CLI tests. */
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { repoRoot } from "./paths.ts";

const bin = path.join(repoRoot, "bin/writ.mjs");

export interface WritRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `writ <args>` in `cwd`, with `env` added to this process's environment. */
export function writ(args: string[], cwd: string, env: Record<string, string> = {}): Promise<WritRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
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
