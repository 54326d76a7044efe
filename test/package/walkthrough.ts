/**
 * The README's "From zero to your own tool", run as written in a project where the packed
 * tarball is installed (test/package/package.test.ts makes it): every file and command comes
 * from the README, found by its `<!-- walkthrough: … -->` marker; only the ports 8080 and 3001
 * are replaced by free ones.
 *
 * - `file <name>`: the block is written to that file;
 * - `check`: `writ policy test` (its three tests pass) and `writ tools --as` (bob sees notes.read);
 * - `start`: each line runs in bash and keeps running; ready when it prints a URL;
 * - `try`: the block runs as one bash script; its output is checked below.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { z } from "zod";
import { repoRoot } from "../support/paths.ts";
import { freePort } from "../support/ports.ts";

const run = promisify(execFile);

export interface WalkthroughStep {
  kind: string;
  argument: string;
  text: string;
}

/** The marked blocks of the README's walkthrough section, in order. */
export async function walkthroughSteps(): Promise<WalkthroughStep[]> {
  const readme = await readFile(path.join(repoRoot, "README.md"), "utf8");
  const steps: WalkthroughStep[] = [];
  const marked = /<!-- walkthrough: (\w+)(?: (\S+))? -->\n```\w*\n([\s\S]*?)\n```/g;
  for (const match of readme.matchAll(marked)) {
    steps.push({ kind: match[1] ?? "", argument: match[2] ?? "", text: `${match[3] ?? ""}\n` });
  }
  return steps;
}

const answerSchema = z.object({
  results: z.array(
    z.object({
      decision: z.string(),
      reasons: z.array(z.object({ code: z.string() })),
      result: z.object({ structured_content: z.unknown() }).optional(),
      error: z.object({ category: z.string() }).optional(),
    }),
  ),
});

/** Registers the walkthrough's test; `project` is the folder where the tarball is installed. */
export function walkthroughTests(project: () => string): void {
  const children: ChildProcess[] = [];

  afterAll(() => {
    // Each started command leads its own process group (bash and what it runs).
    for (const child of children) {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGKILL");
    }
  });

  it("runs the README's walkthrough as written: the owner's call reaches the service, another's is denied", async () => {
    const steps = await walkthroughSteps();
    expect(steps.map((s) => `${s.kind} ${s.argument}`.trim())).toEqual([
      "file writ.yaml",
      "file policy/notes.rego",
      "file policy/notes_test.rego",
      "file backend.mjs",
      "check",
      "start",
      "try",
    ]);
    const dir = path.join(project(), "walkthrough");
    await mkdir(path.join(dir, "policy"), { recursive: true });
    const [writPort, servicePort] = [await freePort(), await freePort()];
    const ported = (text: string) =>
      text.replaceAll("8080", String(writPort)).replaceAll("3001", String(servicePort));
    const bash = (script: string) => run("bash", ["-c", script], { cwd: dir, env: process.env });

    let tried = "";
    for (const step of steps) {
      const text = ported(step.text);
      const lines = text.split("\n").filter((line) => line.trim() !== "" && !line.trim().startsWith("#"));
      if (step.kind === "file") await writeFile(path.join(dir, step.argument), text);
      if (step.kind === "check") {
        const [test, tools] = lines;
        expect(lines).toHaveLength(2);
        expect((await bash(test ?? "")).stdout).toMatch(/PASS: 3\/3/);
        expect((await bash(tools ?? "")).stdout).toMatch(
          /^bob \(tenant demo.*\) sees 1 of 1 tools\n\s+shown\s+notes\.read@1\s+allow/,
        );
      }
      if (step.kind === "start") {
        await Promise.all(lines.map((line) => started(line, dir, children)));
      }
      if (step.kind === "try") tried = (await bash(text)).stdout;
    }

    const [alice, bob] = tried
      .trim()
      .split("\n")
      .map((line) => answerSchema.parse(JSON.parse(line)).results[0]);
    expect(alice).toMatchObject({
      decision: "allow",
      result: { structured_content: { id: "n1", text: "Buy milk." } },
    });
    expect(alice?.error).toBeUndefined();
    expect(bob).toMatchObject({ decision: "deny", reasons: [{ code: "not_owner" }] });
    const direct = await fetch(`http://127.0.0.1:${servicePort}/notes/n1`);
    expect(direct.status).toBe(403);
    expect(await direct.json()).toMatchObject({ code: "missing_grant" });
  }, 120_000);
}

/** Starts a long-running command; resolves once it printed a URL, fails if it exits first. */
function started(command: string, cwd: string, children: ChildProcess[]): Promise<void> {
  const child = spawn("bash", ["-c", `exec ${command}`], {
    cwd,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  return new Promise<void>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (/https?:\/\/\S+/.test(output)) resolve();
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("exit", (code) =>
      reject(new Error(`${command} exited (${code}) before it was ready: ${output}`)),
    );
  });
}
