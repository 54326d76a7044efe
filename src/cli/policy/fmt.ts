/**
 * `writ policy fmt`: `opa fmt` for Rego v1. Prints each file formatted, or rewrites it (`-w`),
 * lists those whose formatting differs (`-l`), or shows the change as a unified diff (`-d`);
 * `--fail` (alias `--check`) makes a difference an error. Folders are searched for `.rego`
 * files in `opa fmt`'s order, and as `opa fmt` it stops at the first failure, with its exit
 * codes: 2 for a file that cannot be formatted or (with `--fail`) would change, 1 for a path
 * that cannot be read or for bad standard input.
 */
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { formatSource } from "../../rego/format/index.ts";
import { helpOption, parseCommandArgs } from "./args.ts";
import { unifiedDiff } from "./line-diff.ts";

const command = "writ policy fmt";

export const fmtUsage = `usage: writ policy fmt [options] [<path>...]

Formats Rego v1 files exactly as \`opa fmt\` does. Folders are searched for *.rego files;
without a path, the policy is read from standard input and written to standard output.

options:
  -w, --write            rewrite the files in place
  -l, --list             print the names of the files whose formatting differs
  -d, --diff             print a unified diff of the changes
      --fail             exit 2 if a file would change (with -l or -d, after printing it)
      --check            the same as --fail
      --drop-v0-imports  drop \`import rego.v1\` and \`future.keywords\` imports
  -h, --help             show this text

exit codes: 0 done; 1 a path or standard input cannot be read; 2 a file cannot be
formatted (its errors are printed), or would change with --fail.`;

/** Stops the run: what `opa fmt` prints on its standard error, and its exit code. */
class FmtFailure extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

interface FmtOptions {
  write: boolean;
  list: boolean;
  diff: boolean;
  fail: boolean;
  dropV0Imports: boolean;
}

export async function fmtCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(command, fmtUsage, () =>
    parseArgs({
      args: argv,
      options: {
        ...helpOption,
        write: { type: "boolean", short: "w" },
        list: { type: "boolean", short: "l" },
        diff: { type: "boolean", short: "d" },
        fail: { type: "boolean" },
        check: { type: "boolean" },
        "drop-v0-imports": { type: "boolean" },
      },
      allowPositionals: true,
      strict: true,
    }),
  );
  if (typeof parsed === "number") return parsed;
  const values = parsed.values;
  const options: FmtOptions = {
    write: values.write === true,
    list: values.list === true,
    diff: values.diff === true,
    fail: values.fail === true || values.check === true,
    dropV0Imports: values["drop-v0-imports"] === true,
  };
  try {
    if (parsed.positionals.length === 0) {
      await formatStdin(options);
      return 0;
    }
    for (const target of parsed.positionals) {
      for (const file of await regoFilesIn(target)) await formatFile(file, options);
    }
    return 0;
  } catch (error) {
    if (!(error instanceof FmtFailure)) throw error;
    console.error(`${command}: ${error.message}`);
    return error.exitCode;
  }
}

/** The `.rego` files at `target`, in the order of Go's `filepath.Walk` (names sorted per folder). */
async function regoFilesIn(target: string): Promise<string[]> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(target);
  } catch {
    throw new FmtFailure(`cannot read ${target}: check that the path exists`, 1);
  }
  if (!info.isDirectory()) return path.extname(target) === ".rego" ? [target] : [];
  const entries = await readdir(target, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const files: string[] = [];
  for (const entry of entries) {
    const child = path.join(target, entry.name);
    if (entry.isDirectory()) files.push(...(await regoFilesIn(child)));
    else if (entry.isFile() && path.extname(entry.name) === ".rego") files.push(child);
  }
  return files;
}

function format(source: string, file: string, options: FmtOptions): string {
  const result = formatSource(source, file, { dropV0Imports: options.dropV0Imports });
  if (result.ok) return result.text;
  const errors = result.errors.map((e) => e.message).join("\n");
  throw new FmtFailure(`cannot format ${file}; fix these errors first:\n${errors}`, 2);
}

async function formatFile(file: string, options: FmtOptions): Promise<void> {
  let source: string;
  try {
    source = await readFile(file, "utf8");
  } catch {
    throw new FmtFailure(`cannot read ${file}: check its permissions`, 2);
  }
  const formatted = format(source, file, options);
  const changed = formatted !== source;
  const notFormatted = (): FmtFailure =>
    new FmtFailure(`${file} is not formatted; run \`${command} -w ${file}\` to format it`, 2);
  if (options.fail && !options.list && !options.diff && changed) throw notFormatted();
  if (options.list) {
    if (changed) {
      process.stdout.write(`${file}\n`);
      if (options.fail) throw notFormatted();
    }
    return;
  }
  if (options.diff) {
    if (changed) {
      process.stdout.write(unifiedDiff(source, formatted, `a/${file}`, `b/${file}`));
      if (options.fail) throw notFormatted();
    }
    return;
  }
  if (options.write) {
    if (changed) await writeFile(file, formatted);
    return;
  }
  process.stdout.write(formatted);
}

async function formatStdin(options: FmtOptions): Promise<void> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk));
  } catch {
    throw new FmtFailure("cannot read standard input", 1);
  }
  const formatted = formatSource(Buffer.concat(chunks).toString("utf8"), "stdin", {
    dropV0Imports: options.dropV0Imports,
  });
  if (!formatted.ok) {
    const errors = formatted.errors.map((e) => e.message).join("\n");
    throw new FmtFailure(`cannot format standard input; fix these errors first:\n${errors}`, 1);
  }
  process.stdout.write(formatted.text);
}
