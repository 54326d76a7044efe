/**
 * The bundle manifest (`/.manifest`), as OPA's `bundle.Manifest`: the revision, the `data`
 * roots the bundle owns, the Wasm entrypoints and the module that answers each, and the Rego
 * version of its sources (`rego_version`, and `file_rego_versions` for files that differ).
 * Unknown fields are kept.
 */
import { z } from "zod";
import { compileGlob } from "../builtins/impl/glob.ts";
import type { RegoVersion } from "../syntax/index.ts";
import type { DataObject } from "./data.ts";
import { isDataObject } from "./data.ts";
import { BundleError } from "./error.ts";

const wasmResolverSchema = z.looseObject({
  entrypoint: z.string().min(1, "an entrypoint must be a rule path such as writ/decision"),
  module: z.string().min(1, "a module must be the path of a Wasm file in the bundle, such as /policy.wasm"),
  annotations: z.array(z.unknown()).optional(),
});

export const manifestSchema = z.looseObject({
  revision: z.string().default(""),
  roots: z.array(z.string()).default([""]),
  wasm: z.array(wasmResolverSchema).default([]),
  rego_version: z.union([z.literal(0), z.literal(1)]).optional(),
  file_rego_versions: z.record(z.string(), z.number().int()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export type BundleManifest = z.output<typeof manifestSchema>;
export type WasmResolver = BundleManifest["wasm"][number];

/** The manifest of a bundle without one: it owns all of `data` (OPA's default). */
export function defaultManifest(): BundleManifest {
  return { revision: "", roots: [""], wasm: [] };
}

/** Parses and checks `.manifest` text. `file` names it in errors. */
export function parseManifest(text: string, file: string): BundleManifest {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new BundleError(`${file}: the manifest is not valid JSON (${reason}): fix or remove it`);
  }
  const parsed = manifestSchema.safeParse(document);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(the manifest)"}: ${i.message}`);
    throw new BundleError(
      `${file}: invalid manifest (${issues.join("; ")}): see https://www.openpolicyagent.org/docs/management-bundles for its fields`,
    );
  }
  const manifest = parsed.data;
  manifest.roots = manifest.roots.map((r) => r.replace(/^\/+|\/+$/g, ""));
  return manifest;
}

/**
 * The Rego version of a bundle's `.rego` file as OPA reads the manifest
 * (`Manifest.numericRegoVersionForFile`): the first `file_rego_versions` pattern that matches
 * the file's path in the bundle (`/a/b.rego`; the patterns are globs, `*` crossing `/`), else
 * `rego_version`; undefined when the manifest says neither, and the reader's own version applies.
 */
export function regoVersionForFile(manifest: BundleManifest, file: string): RegoVersion | undefined {
  let version: number | undefined = manifest.rego_version;
  for (const [pattern, fileVersion] of Object.entries(manifest.file_rego_versions ?? {})) {
    const glob = compileGlob(pattern, []);
    if (glob === undefined) {
      throw new BundleError(
        `.manifest: file_rego_versions names ${JSON.stringify(pattern)}, which is not a valid glob: fix the pattern`,
      );
    }
    if (glob.matches(file)) {
      version = fileVersion;
      break;
    }
  }
  if (version === undefined || version === 0 || version === 1) return version;
  throw new BundleError(
    `.manifest: unknown Rego version ${version} for ${file}: rego_version and file_rego_versions take 0 or 1`,
  );
}

function segments(path: string): string[] {
  return path.split("/");
}

function rootContains(root: readonly string[], other: readonly string[]): boolean {
  if (root.length === 1 && root[0] === "") return true;
  if (root.length > other.length) return false;
  return root.every((s, i) => s === other[i]);
}

/** Whether `path` (slash separated, like `writ/decision`) lies under one of `roots`. */
export function rootsContain(roots: readonly string[], path: string): boolean {
  const p = segments(path.replace(/^\/+|\/+$/g, ""));
  return roots.some((r) => rootContains(segments(r), p));
}

/**
 * Checks a manifest against the bundle it came with, as OPA does on activation: roots do not
 * overlap, entrypoints lie under the roots and name Wasm files that exist, and `data` stays
 * under the roots.
 */
export function checkManifest(
  manifest: BundleManifest,
  bundle: { wasmFiles: readonly string[]; data: DataObject },
): void {
  const { roots } = manifest;
  for (let i = 0; i < roots.length; i++) {
    for (let j = i + 1; j < roots.length; j++) {
      const a = segments(roots[i]!);
      const b = segments(roots[j]!);
      if (rootContains(a, b) || rootContains(b, a)) {
        throw new BundleError(
          `.manifest: roots ${JSON.stringify(roots[i])} and ${JSON.stringify(roots[j])} overlap: keep only the shorter one`,
        );
      }
    }
  }
  const seen = new Set<string>();
  for (const resolver of manifest.wasm) {
    const module = normalizeModulePath(resolver.module);
    if (!bundle.wasmFiles.includes(module)) {
      throw new BundleError(
        `.manifest: entrypoint ${resolver.entrypoint} names the Wasm module ${resolver.module}, which is not in the bundle: rebuild the bundle`,
      );
    }
    if (!rootsContain(roots, resolver.entrypoint)) {
      throw new BundleError(
        `.manifest: entrypoint ${resolver.entrypoint} lies outside the bundle's roots ${JSON.stringify(roots)}: add its root to "roots"`,
      );
    }
    if (seen.has(resolver.entrypoint)) {
      throw new BundleError(
        `.manifest: entrypoint ${resolver.entrypoint} is listed twice: list each entrypoint once`,
      );
    }
    seen.add(resolver.entrypoint);
  }
  checkDataRoots(bundle.data, [], roots);
}

function checkDataRoots(node: unknown, at: string[], roots: readonly string[]): void {
  if (at.length > 0) {
    if (rootsContain(roots, at.join("/"))) return;
    // An object on the way to a root is fine as long as what it holds lies under a root.
    const onTheWay = isDataObject(node) && roots.some((r) => rootContains(at, segments(r)));
    if (!onTheWay) {
      throw new BundleError(
        `the bundle's data sets data.${at.join(".")}, outside its roots ${JSON.stringify(roots)}: move the data file under a root or add the root to the manifest`,
      );
    }
  }
  if (isDataObject(node)) {
    for (const [key, value] of Object.entries(node)) checkDataRoots(value, [...at, key], roots);
  }
}

/** A Wasm module path as a bundle stores it: posix, with a leading `/`. */
export function normalizeModulePath(module: string): string {
  return `/${module.replace(/^\/+/, "")}`;
}
