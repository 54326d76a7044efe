/** Rego source files and their parsing, for every tool that takes them (build, check, test). */
import type { RegoError } from "./errors.ts";
import type { Module } from "./syntax/ast.ts";
import { parseModule, type RegoVersion } from "./syntax/index.ts";

export interface RegoSource {
  file: string;
  source: string;
  /**
   * The Rego version the source is written in, when it has its own (a bundle's
   * `file_rego_versions`); otherwise the build's `regoVersion`.
   */
  regoVersion?: RegoVersion;
}

/**
 * Parses every source in its Rego version (its own, else `regoVersion`, default 1); the modules
 * that parsed, and every error of those that did not.
 */
export function parseModules(
  sources: readonly RegoSource[],
  options: { regoVersion?: RegoVersion } = {},
): { modules: Module[]; errors: RegoError[] } {
  const modules: Module[] = [];
  const errors: RegoError[] = [];
  for (const s of sources) {
    const parsed = parseModule(s.source, s.file, { regoVersion: s.regoVersion ?? options.regoVersion });
    errors.push(...parsed.errors);
    if (parsed.module) modules.push(parsed.module);
  }
  return { modules, errors };
}
