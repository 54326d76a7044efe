/** Where policies come from: a folder of Rego and data files, a bundle file, or a bundle server. */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { isRecord } from "../core/json.ts";
import { PolicyLoadError } from "./errors.ts";

/** Every `.rego` (not `_test.rego`) and `data.json`/`data.yaml` file below `dir`, sorted. */
export async function policyFiles(dir: string): Promise<{ rego: string[]; data: string[] }> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
  return {
    rego: files.filter((f) => f.endsWith(".rego") && !f.endsWith("_test.rego")).sort(),
    data: files.filter((f) => /(^|\/)data\.(json|ya?ml)$/.test(f)).sort(),
  };
}

/** Merges `value` into `target` at `at` (a data file's folder), like OPA's bundle loader. */
export function mergeAt(target: Record<string, unknown>, at: string[], value: unknown): void {
  let node = target;
  for (const key of at) {
    let child = node[key];
    if (!isRecord(child)) {
      child = {};
      node[key] = child;
    }
    if (!isRecord(child)) return;
    node = child;
  }
  if (isRecord(value)) Object.assign(node, value);
}

export const BUNDLE_FETCH_TIMEOUT_MS = 30_000;

/** Whether a `policy.bundle` names a bundle server rather than a file. */
export function isBundleUrl(source: string): boolean {
  return /^https?:\/\//i.test(source);
}

export function digestOf(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

export async function readBundleFile(file: string): Promise<Uint8Array> {
  try {
    return await readFile(file);
  } catch {
    throw new PolicyLoadError(`cannot read the bundle ${file}`, ["check policy.bundle in the configuration"]);
  }
}
