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
