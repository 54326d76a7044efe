/** Where policies come from: a folder of Rego and data files, a bundle file, or a bundle server. */
import { createHash } from "node:crypto";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { isRecord } from "../core/json.ts";
import type { RegoVersion } from "../rego/syntax/index.ts";
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

/** One file of a policy folder: its path inside the folder and its text. */
export interface PolicyFile {
  path: string;
  text: string;
  /** A `.rego` file's Rego version, where known (a folder's `policy.rego_version`, a bundle's manifest). */
  rego_version?: RegoVersion;
}

/** A policy folder as read: its `.rego` files, then its data files, each group sorted. */
export interface DirectorySources {
  kind: "directory";
  /** The folder it was read from (its files' names in compile errors are under it). */
  origin: string;
  files: PolicyFile[];
  /** The Rego version of its `.rego` files (`policy.rego_version`); absent is 1. */
  regoVersion?: RegoVersion;
}

/** A bundle as loaded: its bytes, and where they came from. */
export interface BundleSources {
  kind: "bundle";
  origin: string;
  bytes: Uint8Array;
}

export type RevisionSources = DirectorySources | BundleSources;

/** A revision the engine installed, with what it was loaded from. */
export interface LoadedRevision {
  id: string;
  sources: RevisionSources;
}

const DATA_FILE = /(^|[/\\])data\.(json|ya?ml)$/;

/**
 * Reads a policy folder's sources and data files, its `.rego` files in `regoVersion` (default 1).
 * Throws PolicyLoadError when it is no folder.
 */
export async function readDirectorySources(
  dir: string,
  regoVersion: RegoVersion = 1,
): Promise<DirectorySources> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new PolicyLoadError(`policy folder ${dir} does not exist`, []);
  const found = await policyFiles(dir);
  const files = await Promise.all(
    [...found.rego, ...found.data].map(async (f) => ({
      path: path.relative(dir, f),
      text: await readFile(f, "utf8"),
    })),
  );
  return { kind: "directory", origin: dir, files, ...(regoVersion === 0 ? { regoVersion } : {}) };
}

/**
 * A folder's data files merged into one document, each at its folder's path (as OPA loads
 * bundles). Throws PolicyLoadError naming a file that does not parse.
 */
export function dataOfFiles(dataFiles: readonly PolicyFile[], dir: string): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const f of dataFiles) {
    let value: unknown;
    try {
      value = f.path.endsWith(".json") ? JSON.parse(f.text) : parseYaml(f.text);
    } catch (error) {
      throw new PolicyLoadError(`cannot read data file ${path.join(dir, f.path)}`, [
        error instanceof Error ? error.message : String(error),
      ]);
    }
    const rel = path.dirname(f.path);
    mergeAt(data, rel === "." ? [] : rel.split(path.sep), value);
  }
  return data;
}

/** A folder's files split into Rego sources (tests excluded) and data files, in their order. */
export function splitPolicyFiles(files: readonly PolicyFile[]): { rego: PolicyFile[]; data: PolicyFile[] } {
  return {
    rego: files.filter((f) => f.path.endsWith(".rego") && !f.path.endsWith("_test.rego")),
    data: files.filter((f) => DATA_FILE.test(f.path)),
  };
}

/** Where a bundle came from, as archived and listed: a bundle server's URL without credentials or query. */
export function bundleOrigin(source: string): string {
  if (!isBundleUrl(source)) return source;
  try {
    const url = new URL(source);
    url.username = "";
    url.password = "";
    url.search = "";
    url.hash = "";
    return url.toString();
  } catch {
    return source;
  }
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

/**
 * Fetches a bundle from a bundle server; with `etag`, a 304 answer means it has not changed
 * (`bytes` undefined).
 */
export async function fetchBundle(
  url: string,
  requestHeaders: Record<string, string> | undefined,
  etag?: string,
): Promise<{ bytes?: Uint8Array; etag?: string }> {
  const headers = new Headers(requestHeaders);
  if (etag !== undefined) headers.set("if-none-match", etag);
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(BUNDLE_FETCH_TIMEOUT_MS) });
  } catch (error) {
    throw new PolicyLoadError(`cannot fetch the bundle from ${url}`, [
      error instanceof Error ? error.message : String(error),
      "check that the bundle server is up and policy.bundle names it",
    ]);
  }
  if (response.status === 304) return etag === undefined ? {} : { etag };
  if (!response.ok) {
    await response.body?.cancel();
    throw new PolicyLoadError(`the bundle server at ${url} answered ${response.status}`, [
      response.status === 401 || response.status === 403
        ? "check policy.bundle_credentials_ref"
        : "check policy.bundle and the bundle server",
    ]);
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  const tag = response.headers.get("etag");
  return tag === null ? { bytes } : { bytes, etag: tag };
}
