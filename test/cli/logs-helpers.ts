/**
 * Helpers for tests that read the decision log the way operators do: `writ logs` run in-process
 * against the SQLite file a real gateway writes, and tampering with that file behind Writ's back.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import Database from "better-sqlite3";
import type { CommandIo } from "../../src/cli/logs/io.ts";
import { logsCommand } from "../../src/cli/logs.ts";
import type { TestGateway } from "../support/gateway.ts";

export interface LogsRun {
  code: number;
  stdout: string[];
  stderr: string;
}

/** A configuration file naming only the gateway's store (the rest is the default). */
export async function writeStoreConfig(gw: TestGateway, folder: string): Promise<string> {
  const file = path.join(folder, "logs-config.yaml");
  await writeFile(file, `store:\n  sqlite: ${JSON.stringify(gw.parts.config.store.sqlite)}\n`);
  return file;
}

/** Runs `writ logs <argv>` in-process, collecting its output lines. */
export async function runLogs(argv: string[]): Promise<LogsRun> {
  return startLogs(argv, new AbortController().signal).done;
}

/**
 * Starts `writ logs <argv>` in-process; `stdout` fills as the command writes (for `tail`), `done`
 * resolves when it returns (abort `signal` to stop a tail).
 */
export function startLogs(argv: string[], signal: AbortSignal): { stdout: string[]; done: Promise<LogsRun> } {
  const stdout: string[] = [];
  let stderr = "";
  const io: CommandIo = {
    out: (line) => {
      stdout.push(line);
    },
    err: (line) => {
      stderr += `${line}\n`;
    },
    signal,
  };
  return { stdout, done: logsCommand(argv, io).then((code) => ({ code, stdout, stderr })) };
}

/**
 * Edits one stored entry directly in the SQLite file (what an attacker with the file could do):
 * the decision becomes `allow`, leaving the stored hash as it was.
 */
export function tamperWithEntry(gw: TestGateway, seq: number): void {
  const db = new Database(gw.parts.config.store.sqlite);
  try {
    const changed = db
      .prepare("UPDATE decisions SET entry = json_set(entry, '$.decision', 'allow') WHERE seq = ?")
      .run(seq);
    if (changed.changes !== 1) throw new Error(`no decision-log row with seq ${seq} to tamper with`);
  } finally {
    db.close();
  }
}
