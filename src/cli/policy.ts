/** `writ policy …`: commands for policy authors. */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parseModule } from "../rego/syntax/index.ts";

const usage = `usage: writ policy check <path>...

  check   parse each Rego file (folders are searched for *.rego) and print every error as
          file:line:col: code: message; exit 1 when any file has errors`;

export async function policyCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case "check":
      return checkCommand(rest);
    default:
      console.error(
        sub === undefined ? usage : `writ policy: unknown command ${JSON.stringify(sub)}\n\n${usage}`,
      );
      return 2;
  }
}

async function regoFilesUnder(target: string): Promise<string[]> {
  const info = await stat(target);
  if (!info.isDirectory()) return [target];
  const entries = await readdir(target, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".rego"))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

async function checkCommand(paths: string[]): Promise<number> {
  if (paths.length === 0) {
    console.error(`writ policy check: name at least one file or folder\n\n${usage}`);
    return 2;
  }
  const files: string[] = [];
  for (const target of paths) {
    try {
      files.push(...(await regoFilesUnder(target)));
    } catch {
      console.error(`writ policy check: cannot read ${target}: check that the path exists`);
      return 2;
    }
  }
  let errorCount = 0;
  for (const file of files) {
    const { errors } = parseModule(await readFile(file, "utf8"), file);
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
