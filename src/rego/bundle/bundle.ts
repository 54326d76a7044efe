/**
 * OPA bundles for the Wasm target, the layout `opa build -t wasm` writes: a gzipped tar holding
 * `/data.json`, the `.rego` sources, `/policy.wasm` and `/.manifest`. Bundles built by Writ and by
 * a real `opa` read the same way.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import type { RegoSource } from "../build.ts";
import type { RegoVersion } from "../syntax/index.ts";
import { type DataObject, dataPathOf, insertData, isDataFile, isDataObject, parseDataText } from "./data.ts";
import { BundleError } from "./error.ts";
import {
  type BundleManifest,
  checkManifest,
  defaultManifest,
  normalizeModulePath,
  parseManifest,
  regoVersionForFile,
} from "./manifest.ts";
import { DEFAULT_SIZE_LIMIT, packTarGz, type TarFile, unpackTarGz } from "./tar.ts";

export const WASM_FILE = "policy.wasm";
const WASM_PATH = `/${WASM_FILE}`;
const MANIFEST_PATH = "/.manifest";

export interface BundleInput {
  /** The compiled policy module. */
  wasm: Uint8Array;
  /** Rule paths the module answers (`writ/decision`), in the module's `entrypoints()` order. */
  entrypoints: readonly string[];
  /** Base documents, written to `/data.json`. */
  data?: DataObject;
  /**
   * Rego sources, kept in the bundle as OPA keeps them; `file` is the path inside the bundle. A
   * source whose own `regoVersion` is not the bundle's is listed in `file_rego_versions`.
   */
  sources?: readonly RegoSource[];
  /** The Rego version of the sources, the manifest's `rego_version` (default 1). */
  regoVersion?: RegoVersion;
  /** Defaults to a content hash: sha256 (hex) of the data, sources and module. */
  revision?: string;
  /** The `data` paths the bundle owns; defaults to `[""]`, all of `data`. */
  roots?: readonly string[];
  /** Free-form `metadata` for the manifest. */
  metadata?: Record<string, unknown>;
}

/** A bundle read back. */
export interface Bundle {
  /** The policy module; undefined for a bundle built for the Rego target (sources only). */
  wasm: Uint8Array | undefined;
  /** All data files merged, each at its folder's path. */
  data: DataObject;
  /** The manifest, with OPA's defaults (`revision: ""`, `roots: [""]`) when the bundle has none. */
  manifest: BundleManifest;
  /** Whether the bundle had a `.manifest`. */
  hasManifest: boolean;
  /**
   * The `.rego` files; `file` is the path inside the bundle, with a leading `/`, and
   * `regoVersion` the version the manifest gives it (none when it says nothing).
   */
  sources: RegoSource[];
}

export interface ReadBundleOptions {
  /** Largest unpacked size accepted, in bytes (default 1 GiB, as OPA). */
  sizeLimit?: number;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** `a/./b`, `/a/b`, `./a/b` → `/a/b`; undefined for a path that climbs out (`../x`). */
function normalizeEntryName(name: string): string | undefined {
  const parts = name
    .replaceAll("\\", "/")
    .split("/")
    .filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) return undefined;
  return `/${parts.join("/")}`;
}

function normalizeEntrypoint(entrypoint: string): string {
  return entrypoint.replace(/^\/+|\/+$/g, "");
}

function contentHash(files: readonly TarFile[]): string {
  const hash = createHash("sha256");
  for (const f of files) {
    hash.update(`${f.name}\0${f.bytes.byteLength}\0`);
    hash.update(f.bytes);
  }
  return hash.digest("hex");
}

/** Writes a bundle in the layout of `opa build -t wasm`. */
export async function writeBundle(input: BundleInput): Promise<Uint8Array> {
  return (await createBundle(input)).bytes;
}

/** `writeBundle`, also answering the manifest written (with the revision it computed). */
export async function createBundle(
  input: BundleInput,
): Promise<{ bytes: Uint8Array; manifest: BundleManifest }> {
  const entrypoints = input.entrypoints.map(normalizeEntrypoint);
  if (entrypoints.length === 0 || entrypoints.some((e) => e === "")) {
    throw new BundleError("a bundle needs at least one entrypoint, such as writ/decision");
  }
  const duplicate = entrypoints.find((e, i) => entrypoints.indexOf(e) !== i);
  if (duplicate !== undefined) {
    throw new BundleError(`entrypoint ${duplicate} is given twice: name each entrypoint once`);
  }
  const data = input.data ?? {};
  if (!isDataObject(data)) throw new BundleError("bundle data must be a JSON object");

  const regoVersion = input.regoVersion ?? 1;
  const sources: TarFile[] = [];
  const fileRegoVersions: Record<string, number> = {};
  const seen = new Set<string>([WASM_PATH, "/data.json", MANIFEST_PATH]);
  for (const s of input.sources ?? []) {
    const name = normalizeEntryName(s.file);
    if (name === undefined || !name.endsWith(".rego")) {
      throw new BundleError(
        `source ${JSON.stringify(s.file)} cannot go in a bundle: use a relative path ending in .rego, inside the bundle`,
      );
    }
    if (seen.has(name)) {
      throw new BundleError(`two sources would be stored as ${name}: give each source its own path`);
    }
    seen.add(name);
    sources.push({ name, bytes: encoder.encode(s.source) });
    if (s.regoVersion !== undefined && s.regoVersion !== regoVersion) fileRegoVersions[name] = s.regoVersion;
  }
  sources.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const files: TarFile[] = [
    { name: "/data.json", bytes: encoder.encode(JSON.stringify(data)) },
    ...sources,
    { name: WASM_PATH, bytes: input.wasm },
  ];
  const manifest: BundleManifest = {
    revision: input.revision ?? contentHash(files),
    roots: (input.roots ?? [""]).map((r) => r.replace(/^\/+|\/+$/g, "")),
    wasm: entrypoints.map((entrypoint) => ({ entrypoint, module: WASM_PATH })),
    rego_version: regoVersion,
    ...(Object.keys(fileRegoVersions).length > 0 ? { file_rego_versions: fileRegoVersions } : {}),
    ...(input.metadata ? { metadata: input.metadata } : {}),
  };
  checkManifest(manifest, { wasmFiles: [WASM_PATH], data });
  files.push({ name: MANIFEST_PATH, bytes: encoder.encode(JSON.stringify(manifest)) });
  return { bytes: await packTarGz(files), manifest };
}

function decodeText(file: TarFile, name: string): string {
  try {
    return utf8.decode(file.bytes);
  } catch {
    throw new BundleError(`${name} is not UTF-8 text: save it as UTF-8 and rebuild the bundle`);
  }
}

/**
 * Reads a bundle: `opa build` layout, entry paths with or without a leading `/`, data files in
 * any folder merged at that folder's path, manifest optional. Signatures (`.signatures.json`)
 * are not verified.
 */
export async function readBundle(bytes: Uint8Array, options: ReadBundleOptions = {}): Promise<Bundle> {
  const files = await unpackTarGz(bytes, options.sizeLimit ?? DEFAULT_SIZE_LIMIT);
  if (files.length === 0) {
    throw new BundleError(
      "the bundle holds no files: build it with `writ policy build` or `opa build -t wasm`",
    );
  }
  const seen = new Set<string>();
  const wasmFiles = new Map<string, Uint8Array>();
  const sources: RegoSource[] = [];
  const data: DataObject = {};
  let manifest: BundleManifest | undefined;
  for (const file of files) {
    const name = normalizeEntryName(file.name);
    if (name === undefined) {
      throw new BundleError(
        `the bundle holds ${JSON.stringify(file.name)}, a path that leaves the bundle: rebuild it without ".." in paths`,
      );
    }
    if (seen.has(name)) {
      throw new BundleError(`the bundle holds ${name} twice: rebuild it so that each path appears once`);
    }
    seen.add(name);
    const base = path.posix.basename(name);
    if (name.endsWith(".rego")) {
      sources.push({ file: name, source: decodeText(file, name) });
    } else if (base === WASM_FILE) {
      wasmFiles.set(name, file.bytes);
    } else if (isDataFile(base)) {
      insertData(data, dataPathOf(name), parseDataText(name, decodeText(file, name)), name);
    } else if (base === "patch.json") {
      throw new BundleError(
        `the bundle holds ${name}, so it is a delta bundle, which Writ does not load: use a snapshot bundle`,
      );
    } else if (name.endsWith(".manifest")) {
      if (manifest) throw new BundleError("the bundle holds two manifests: keep one /.manifest");
      manifest = parseManifest(decodeText(file, name), name);
    }
  }
  const hasManifest = manifest !== undefined;
  const effective = manifest ?? defaultManifest();
  checkManifest(effective, { wasmFiles: [...wasmFiles.keys()], data });
  for (const source of sources) {
    const version = regoVersionForFile(effective, source.file);
    if (version !== undefined) source.regoVersion = version;
  }

  const referenced = new Set(effective.wasm.map((r) => normalizeModulePath(r.module)));
  const candidates = referenced.size > 0 ? [...referenced] : [...wasmFiles.keys()];
  if (candidates.length > 1) {
    throw new BundleError(
      `the bundle holds ${candidates.length} Wasm modules (${candidates.join(", ")}); Writ loads bundles with one: build all entrypoints into one module`,
    );
  }
  const wasmPath = candidates[0];
  return {
    wasm: wasmPath === undefined ? undefined : wasmFiles.get(wasmPath),
    data,
    manifest: effective,
    hasManifest,
    sources,
  };
}
