/**
 * Where a `writ logs` command writes, and what stops it: standard output and error plus SIGINT in
 * the `writ` binary; collected strings and an AbortController in tests.
 */
import { once } from "node:events";

export interface CommandIo {
  /** Writes one line (a newline is added) to standard output; resolves when it may write more. */
  out(line: string): Promise<void> | void;
  /** Writes one line to standard error. */
  err(line: string): void;
  /** Aborted when the user asks a long-running command (`tail`) to stop. */
  signal: AbortSignal;
  /**
   * The terminal's width when standard output is one; undefined when it is a pipe or a file, where
   * nothing is cut to fit (`writ logs query | cat` shows every cell whole).
   */
  columns?: number | undefined;
}

/**
 * Standard output (waiting for it to drain: back pressure, not buffering), stderr, SIGINT/SIGTERM.
 * `close()` removes the signal handlers once the command is done.
 */
export function processIo(): CommandIo & { close(): void } {
  const stop = new AbortController();
  const abort = () => stop.abort();
  process.once("SIGINT", abort);
  process.once("SIGTERM", abort);
  stop.signal.addEventListener("abort", () => {
    process.off("SIGINT", abort);
    process.off("SIGTERM", abort);
  });
  return {
    async out(line) {
      if (!process.stdout.write(`${line}\n`)) await once(process.stdout, "drain");
    },
    err(line) {
      process.stderr.write(`${line}\n`);
    },
    signal: stop.signal,
    columns: process.stdout.isTTY ? process.stdout.columns : undefined,
    close: abort,
  };
}
