/**
 * `writ logs query` (issue 31): piped or redirected it never cuts a cell (`writ logs query | cat`);
 * in a terminal it fits the terminal's width, and `--wide` shows every cell whole.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CommandIo } from "../../src/cli/logs/io.ts";
import { logsCommand } from "../../src/cli/logs.ts";
import { canonicalCall, onlyOutcome, README_ARGS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { repoRoot } from "../support/paths.ts";
import { writeStoreConfig } from "./logs-helpers.ts";

let gw: TestGateway;
let tmp: string;
let config: string;
// Longer than any column's old fixed width (16 for the subject).
const subject = "someone-with-a-rather-long-subject-identifier";

beforeAll(async () => {
  gw = await startTestGateway();
  tmp = await mkdtemp(path.join(os.tmpdir(), "writ-logs-width-"));
  config = await writeStoreConfig(gw, tmp);
  const outcome = onlyOutcome(
    await gw.propose(await gw.token(subject), {
      format: "canonical",
      payload: canonicalCall("repo_read", README_ARGS),
    }),
  );
  expect(outcome.decision).toBe("deny");
  await gw.gateway.log.drain();
}, 60_000);

afterAll(async () => {
  await gw?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** `writ logs query` in-process, as in a terminal `columns` wide. */
async function inTerminal(argv: string[], columns: number): Promise<string[]> {
  const lines: string[] = [];
  const io: CommandIo = {
    out: (line) => {
      lines.push(line);
    },
    err: () => undefined,
    signal: new AbortController().signal,
    columns,
  };
  expect(await logsCommand(["query", "--config", config, ...argv], io)).toBe(0);
  return lines;
}

describe("writ logs query's table", () => {
  it("cuts nothing when its output is a pipe", async () => {
    const bin = path.join(repoRoot, "bin", "writ.mjs");
    const child = spawn(process.execPath, [bin, "logs", "query", "--config", config], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    const row = out.split("\n").find((l) => l.includes(subject));
    expect(row, out).toContain(`demo/${subject}`);
    expect(out).not.toContain("…");
  });

  it("fits a terminal's width, cutting long cells with …, and --wide shows them whole", async () => {
    const narrow = await inTerminal([], 120);
    expect(narrow[0]).toMatch(/^SEQ\s+TIME\s+DECISION\s+SUBJECT/);
    for (const line of narrow) expect(line.length).toBeLessThanOrEqual(120);
    const row = narrow[1];
    expect(narrow).toHaveLength(2);
    expect(row).toMatch(/ demo\/\S*… /);
    expect(row).not.toContain(subject);
    // The decision id is never cut: it is what a reader copies to the next command.
    expect(row).toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

    const wide = await inTerminal(["--wide"], 120);
    expect(wide.find((l) => l.includes(subject))).toContain(`demo/${subject}`);
  });
});
