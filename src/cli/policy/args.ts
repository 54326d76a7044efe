/**
 * Command-line parsing shared by the `writ policy` commands: `node:util` parseArgs in strict
 * mode, `--help` on every command, and exit code 2 with a clear message for usage errors.
 */
import type { z } from "zod";
import type { RegoVersion } from "../../rego/syntax/index.ts";

/** Exit code of a usage error (bad flags or arguments), as opposed to 1 for a failed run. */
export const USAGE_ERROR = 2;

/** Prints a usage error and returns its exit code. */
export function usageError(command: string, problem: string): number {
  console.error(`${command}: ${problem}\nRun \`${command} --help\` for usage.`);
  return USAGE_ERROR;
}

function describeParseError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = "code" in error ? error.code : undefined;
  const quoted = /'([^']+)'/.exec(error.message)?.[1];
  switch (code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option ${quoted ?? ""}`.trim();
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return error.message.replace(/^Option /, "option ");
    default:
      return error.message;
  }
}

/** The `--help` option every command takes; spread it into the command's options. */
export const helpOption = { help: { type: "boolean", short: "h" } } as const;

/**
 * OPA's `--v0-compatible`, taken by the commands that read Rego: the sources (and a query) are
 * Rego v0. `option` goes into the command's options, `usage` into its usage text.
 */
export const v0Compatible = {
  option: { "v0-compatible": { type: "boolean" } },
  usage: `      --v0-compatible  read the Rego as Rego v0, as OPA 1.x does with this flag: rule
                       bodies without \`if\`, \`p[x] { … }\` partial set rules, and in,
                       every, contains and if keywords only after \`import future.keywords\``,
  /** The Rego version the parsed flag asks for. */
  regoVersion(values: { "v0-compatible"?: boolean | undefined }): RegoVersion {
    return values["v0-compatible"] === true ? 0 : 1;
  },
} as const;

/**
 * Runs `parse` (the command's `parseArgs` call, strict, with `helpOption`). Returns its result,
 * or the exit code when the command should stop here: 0 after `--help` (the usage is printed),
 * 2 after a usage error.
 */
export function parseCommandArgs<T extends { values: { help?: boolean | undefined } }>(
  command: string,
  usage: string,
  parse: () => T,
): T | number {
  let parsed: T;
  try {
    parsed = parse();
  } catch (error) {
    return usageError(command, describeParseError(error));
  }
  if (parsed.values.help === true) {
    console.log(usage);
    return 0;
  }
  return parsed;
}

/** Validates parsed arguments with `schema`; a failure is a usage error naming the first problem. */
export function checkArgs<S extends z.ZodType>(
  command: string,
  schema: S,
  args: unknown,
): { ok: true; value: z.output<S> } | { ok: false; exitCode: number } {
  const parsed = schema.safeParse(args);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, exitCode: usageError(command, issue?.message ?? "invalid arguments") };
}
