/**
 * What the policy commands read from disk: Rego files, data files and bundles, named by paths
 * as `opa` takes them. A folder contributes every `.rego` file under it and every `data.json`,
 * `data.yaml` or `data.yml`, merged into `data` at its folder's path (relative to the folder
 * given); a `.json`/`.yaml` file given directly is merged at the root; a `.tar.gz` is a bundle.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { RegoSource } from "../../rego/build.ts";
import {
  type Bundle,
  BundleError,
  type DataObject,
  dataPathOf,
  insertData,
  isDataFile,
  parseDataText,
  readBundle,
} from "../../rego/bundle/index.ts";

/** A problem with the files named on the command line. */
export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InputError";
  }
}

export interface PolicySource extends RegoSource {
  /** `file` is the path on disk (for error messages); this is the path inside a bundle. */
  bundlePath: string;
}

export interface PolicyInputs {
  sources: PolicySource[];
  data: DataObject;
  bundles: Array<{ file: string; bundle: Bundle }>;
}

export function isBundlePath(file: string): boolean {
  return /\.(tar\.gz|tgz)$/i.test(file);
}

function reason(error: unknown): string {
  if (error instanceof Error && "code" in error && error.code === "ENOENT") return "no such file or folder";
  if (error instanceof Error && "code" in error && error.code === "EACCES") return "permission denied";
  return error instanceof Error ? error.message : String(error);
}

async function read(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    throw new InputError(`cannot read ${file}: ${reason(error)}`);
  }
}

/** Reads a JSON or YAML document (YAML for `.yaml`/`.yml`). */
export async function readDataFile(file: string): Promise<unknown> {
  return parseDataText(file, (await read(file)).toString("utf8"));
}

async function addFolder(dir: string, into: PolicyInputs): Promise<void> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
  for (const file of files) {
    const relative = path.relative(dir, file).split(path.sep).join("/");
    if (file.endsWith(".rego")) {
      into.sources.push({ file, bundlePath: relative, source: (await read(file)).toString("utf8") });
    } else if (isDataFile(relative)) {
      insertData(into.data, dataPathOf(relative), await readDataFile(file), file);
    }
  }
}

/**
 * Loads `paths`. Bundles are accepted only when `bundles` is true; otherwise a `.tar.gz` is an
 * error that says to pass the source folder.
 */
export async function loadPolicyInputs(
  paths: readonly string[],
  options: { bundles: boolean },
): Promise<PolicyInputs> {
  const inputs: PolicyInputs = { sources: [], data: {}, bundles: [] };
  for (const target of paths) {
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(target)).isDirectory();
    } catch (error) {
      throw new InputError(`cannot read ${target}: ${reason(error)}`);
    }
    if (isDirectory) {
      await addFolder(target, inputs);
    } else if (target.endsWith(".rego")) {
      inputs.sources.push({
        file: target,
        bundlePath: path.basename(target),
        source: (await read(target)).toString("utf8"),
      });
    } else if (/\.(json|ya?ml)$/i.test(target)) {
      insertData(inputs.data, [], await readDataFile(target), target);
    } else if (isBundlePath(target)) {
      if (!options.bundles) {
        throw new InputError(`${target} is a bundle: pass the folder holding its .rego sources instead`);
      }
      const bytes = await read(target);
      try {
        inputs.bundles.push({ file: target, bundle: await readBundle(bytes) });
      } catch (error) {
        if (error instanceof BundleError) throw new BundleError(`${target}: ${error.message}`);
        throw error;
      }
    } else {
      throw new InputError(
        `${target}: not a folder, .rego file, JSON/YAML data file${options.bundles ? " or .tar.gz bundle" : ""}`,
      );
    }
  }
  return inputs;
}
