/** The default gateway configuration for tests, as a document or written to a file for a command. */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ConfigError, defaultConfigFile, parseConfig } from "../../src/config/index.ts";
import { repoRoot } from "./paths.ts";

export type ConfigDocument = Record<string, unknown>;

/** The embedded default configuration as a document (parsed YAML), for tests to change. */
export async function defaultConfigDocument(): Promise<ConfigDocument> {
  return z.record(z.string(), z.unknown()).parse(parseYaml(await readFile(defaultConfigFile, "utf8")));
}

/** What `writ config check` says is wrong with `document` (its ConfigError's message), or "". */
export function configProblems(document: unknown, base = "/srv/writ", source = "test.yaml"): string {
  try {
    parseConfig(document, base, source);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  return "";
}

/**
 * Writes `<dir>/writ.json`: the embedded default configuration with `change` applied, its
 * relative paths (store, key files, tokens) landing in `dir`, and the repository's policies.
 */
export async function writeConfigFile(
  dir: string,
  change: (defaults: ConfigDocument) => ConfigDocument = (d) => d,
): Promise<string> {
  const defaults = z
    .record(z.string(), z.unknown())
    .parse(parseYaml(await readFile(defaultConfigFile, "utf8")));
  const file = path.join(dir, "writ.json");
  // JSON is YAML; relative paths are resolved against this file's folder.
  await writeFile(
    file,
    JSON.stringify(change({ ...defaults, policy: { dir: path.join(repoRoot, "policies"), watch: false } })),
  );
  return file;
}
