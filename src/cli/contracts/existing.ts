/**
 * The contracts `--check` compares: the `tools:` of a YAML file (a Writ configuration, or what
 * `writ contracts import` wrote) or of every `.yaml`/`.yml` file in a folder.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { parseToolContracts, type ToolContract } from "../../contracts/index.ts";
import { errorMessage, WritError } from "../../core/errors.ts";

function unreadable(where: string, why: string): WritError {
  return new WritError("invalid_argument", `--check ${where}: ${why}`, {
    suggestedFix:
      "name a YAML file with a tools: list (a Writ configuration, or the output of writ contracts import), or a folder of them",
  });
}

async function filesAt(where: string): Promise<string[]> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(where);
  } catch (error) {
    throw unreadable(where, `cannot read it (${errorMessage(error)})`);
  }
  if (!info.isDirectory()) return [where];
  const names = (await readdir(where)).filter((name) => /\.ya?ml$/i.test(name)).sort();
  if (names.length === 0) throw unreadable(where, "the folder holds no .yaml or .yml file");
  return names.map((name) => path.join(where, name));
}

/** Every contract in the files at `where`; throws `invalid_argument` naming the file and field. */
export async function readContracts(where: string): Promise<ToolContract[]> {
  const contracts: ToolContract[] = [];
  for (const file of await filesAt(where)) {
    let document: unknown;
    try {
      document = parseYaml(await readFile(file, "utf8"));
    } catch (error) {
      throw unreadable(file, `not YAML (${errorMessage(error)})`);
    }
    if (document === null || typeof document !== "object" || !("tools" in document)) continue;
    try {
      contracts.push(...parseToolContracts(document.tools, "/tools"));
    } catch (error) {
      if (!(error instanceof WritError)) throw error;
      const [first] = error.fieldErrors;
      throw unreadable(file, first === undefined ? error.message : `${first.path}: ${first.message}`);
    }
  }
  return contracts;
}
