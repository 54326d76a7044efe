/** Rego source files and their parsing, for every tool that takes them (build, check, test). */
import type { RegoError } from "./errors.ts";
import type { Module } from "./syntax/ast.ts";
import { parseModule } from "./syntax/index.ts";

export interface RegoSource {
  file: string;
  source: string;
}

/** Parses every source; the modules that parsed, and every error of those that did not. */
export function parseModules(sources: readonly RegoSource[]): { modules: Module[]; errors: RegoError[] } {
  const modules: Module[] = [];
  const errors: RegoError[] = [];
  for (const s of sources) {
    const parsed = parseModule(s.source, s.file);
    errors.push(...parsed.errors);
    if (parsed.module) modules.push(parsed.module);
  }
  return { modules, errors };
}
