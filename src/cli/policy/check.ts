/** `writ policy check`: parse Rego files and report syntax errors. */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { withCustomBuiltins } from "../../rego/builtins/index.ts";
import { compile } from "../../rego/compile/index.ts";
import type { RegoError } from "../../rego/errors.ts";
import type { Module } from "../../rego/syntax/ast.ts";
import { parseModule } from "../../rego/syntax/index.ts";
import { helpOption, parseCommandArgs, usageError, v0Compatible } from "./args.ts";
import { builtinsOption, builtinsUsage, loadBuiltinsOption } from "./builtins.ts";
import { reportFailure } from "./output.ts";

const command = "writ policy check";

export const checkUsage = `usage: writ policy check <path>... [--builtins <module.mjs>]... [--v0-compatible]

Parses each Rego file (folders are searched for *.rego) and, when they all parse, compiles them
together as \`opa check\` does (undefined functions, type errors of builtin calls, unsafe
variables, recursion). Prints every error as file:line:col: code: message; the exit code is 1
when any file has errors.

options:
${builtinsUsage}
${v0Compatible.usage}
  -h, --help           show this text`;

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
    parseArgs({
      args: argv,
      options: { ...helpOption, ...builtinsOption, ...v0Compatible.option },
      allowPositionals: true,
      strict: true,
    }),
  );
  if (typeof parsed === "number") return parsed;
  const paths = parsed.positionals;
  if (paths.length === 0) return usageError(command, "name at least one file or folder");
  const files: string[] = [];
  for (const target of paths) {
    try {
      files.push(...(await regoFilesUnder(target)));
    } catch {
      console.error(`${command}: cannot read ${target}: check that the path exists`);
      return 2;
    }
  }
  let builtins: Awaited<ReturnType<typeof loadBuiltinsOption>>;
  try {
    builtins = await loadBuiltinsOption(parsed.values.builtins);
  } catch (error) {
    return reportFailure(command, error);
  }
  const regoVersion = v0Compatible.regoVersion(parsed.values);
  const errors: RegoError[] = [];
  const modules: Module[] = [];
  for (const file of files) {
    const result = parseModule(await readFile(file, "utf8"), file, { regoVersion });
    errors.push(...result.errors);
    if (result.module) modules.push(result.module);
  }
  if (errors.length === 0) errors.push(...withCustomBuiltins(builtins, () => compile(modules).errors));
  for (const error of errors) console.error(error.message);
  const errorCount = errors.length;
  if (errorCount > 0) {
    console.error(
      `${errorCount} error${errorCount === 1 ? "" : "s"} in ${files.length} file${files.length === 1 ? "" : "s"}`,
    );
    return 1;
  }
  console.log(`${files.length} file${files.length === 1 ? "" : "s"} parsed without errors`);
  return 0;
}
