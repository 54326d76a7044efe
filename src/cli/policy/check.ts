/** `writ policy check`: parse Rego files and report syntax errors. */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { parseModule } from "../../rego/syntax/index.ts";
import { helpOption, parseCommandArgs, usageError, v0Compatible } from "./args.ts";

const command = "writ policy check";

export const checkUsage = `usage: writ policy check <path>... [--v0-compatible]

Parses each Rego file (folders are searched for *.rego) and prints every error as
file:line:col: code: message; the exit code is 1 when any file has errors.

options:
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
      options: { ...v0Compatible.option, ...helpOption },
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
  const regoVersion = v0Compatible.regoVersion(parsed.values);
  let errorCount = 0;
  for (const file of files) {
    const { errors } = parseModule(await readFile(file, "utf8"), file, { regoVersion });
    for (const error of errors) console.error(error.message);
    errorCount += errors.length;
  }
  if (errorCount > 0) {
    console.error(
      `${errorCount} error${errorCount === 1 ? "" : "s"} in ${files.length} file${files.length === 1 ? "" : "s"}`,
    );
    return 1;
  }
  console.log(`${files.length} file${files.length === 1 ? "" : "s"} parsed without errors`);
  return 0;
}
