import { vi } from "vitest";

/** A `writ` command run in process: its exit code and what it printed (stdout and stderr, in order). */
export async function runCommand(
  run: (argv: string[]) => Promise<number>,
  argv: string[],
): Promise<{ code: number; printed: string }> {
  const printed: string[] = [];
  const keep = (...args: unknown[]) => {
    printed.push(args.map(String).join(" "));
  };
  const log = vi.spyOn(console, "log").mockImplementation(keep);
  const error = vi.spyOn(console, "error").mockImplementation(keep);
  try {
    return { code: await run(argv), printed: printed.join("\n") };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

/**
 * `writ <argv>` through `main` in process: the exit code, what it printed on standard output
 * (console.log lines, then what was written to process.stdout) and on standard error.
 */
export async function runWrit(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const { main } = await import("../../src/cli/main.ts");
  const out = vi.spyOn(console, "log").mockImplementation(() => undefined);
  const err = vi.spyOn(console, "error").mockImplementation(() => undefined);
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  try {
    const code = await main(argv);
    const written = stdout.mock.calls.map((c) => String(c[0])).join("");
    return {
      code,
      out: out.mock.calls.map((c) => c.join(" ")).join("\n") + written,
      err: err.mock.calls.map((c) => c.join(" ")).join("\n"),
    };
  } finally {
    out.mockRestore();
    err.mockRestore();
    stdout.mockRestore();
  }
}
