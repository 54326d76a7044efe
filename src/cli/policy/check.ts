/** `writ policy check`: compile Rego files as `opa check` does and report every error. */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import type { RegoSource } from "../../rego/sources.ts";
import { checkArgs, parseCommandArgs, usageError, v0Compatible } from "./args.ts";
import { loadBuiltinsOption } from "./builtins.ts";
import { discoveryWarning, policyCheckFlags } from "./discovery.ts";
import { reportFailure } from "./output.ts";

const command = "writ policy check";

export const checkUsage = `usage: writ policy check [--strict] <path>... [--builtins <module.mjs>]... [--v0-compatible] [--config <file>]

Parses and compiles the Rego files (folders are searched for *.rego) as \`opa check\` does:
undefined functions and names, unsafe variables, arity and type errors, conflicting rules,
recursion, and for Rego v1 modules duplicate imports, deprecated builtins and declared variables
never used. Every error is printed as file:line:col: code: message; the exit code is 1 when
there is any.

options:
  -S, --strict         OPA's strict mode as well (for every module, v0 or v1): unused function
                       arguments, unused local assignments and unused imports are errors
${policyCheckFlags.usage}`;

const options = {
  strict: { type: "boolean", short: "S" },
  ...policyCheckFlags.options,
} as const;

const argsSchema = z.object({
  positionals: z.array(z.string()).min(1, "name at least one file or folder"),
  strict: z.boolean().default(false),
  ...policyCheckFlags.schema,
});

async function regoFilesUnder(target: string): Promise<string[]> {
  const info = await stat(target);
  if (!info.isDirectory()) return [target];
  const entries = await readdir(target, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".rego"))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

export async function checkCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(command, checkUsage, () =>
    parseArgs({ args: argv, options, allowPositionals: true, strict: true }),
  );
  if (typeof parsed === "number") return parsed;
  const checked = checkArgs(command, argsSchema, { ...parsed.values, positionals: parsed.positionals });
  if (!checked.ok) return checked.exitCode;
  const args = checked.value;
  const files: string[] = [];
  for (const target of args.positionals) {
    try {
      files.push(...(await regoFilesUnder(target)));
    } catch {
      console.error(`${command}: cannot read ${target}: check that the path exists`);
      return 2;
    }
  }
  let builtins: Awaited<ReturnType<typeof loadBuiltinsOption>>;
  try {
    builtins = await loadBuiltinsOption(args.builtins);
  } catch (error) {
    return reportFailure(command, error);
  }
  if (files.length === 0) return usageError(command, `no .rego files in ${args.positionals.join(", ")}`);
  const sources: RegoSource[] = [];
  for (const file of files) sources.push({ file, source: await readFile(file, "utf8") });
  // The compiler (and every builtin's declaration) is loaded only when something is checked.
  const { checkSources } = await import("../../rego/check.ts");
  const errors = checkSources(sources, {
    strict: args.strict,
    regoVersion: v0Compatible.regoVersion(args),
    ...(builtins ? { builtins } : {}),
  });
  for (const error of errors) console.error(error.message);
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;
  if (errors.length > 0) {
    console.error(`${count(errors.length, "error")} in ${count(files.length, "file")}`);
    return 1;
  }
  console.log(`${count(files.length, "file")} checked without errors${args.strict ? " (strict)" : ""}`);
  const warning = await discoveryWarning(args.positionals, args.config);
  if (warning !== undefined) console.error(`${command}: ${warning}`);
  return 0;
}
