/**
 * Loading OPA's YAML conformance cases (`test/cases/testdata/v1/<topic>/*.yaml` in OPA's
 * repository). A case file holds a top-level `cases:` list; the fields used here are the ones
 * OPA's own runner (`topdown/cases`) reads.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

const bindingsSchema = z.record(z.string(), z.unknown());

export const conformanceCaseSchema = z.object({
  note: z.string(),
  query: z.string(),
  modules: z.array(z.string()).default([]),
  data: z.unknown().optional(),
  input: z.unknown().optional(),
  input_term: z.string().optional(),
  want_result: z.array(bindingsSchema).nullable().optional(),
  want_defined: z.boolean().optional(),
  want_error_code: z.string().optional(),
  want_error: z.string().optional(),
  sort_bindings: z.boolean().optional(),
  strict_error: z.boolean().optional(),
});

const caseFileSchema = z.object({
  cases: z.array(conformanceCaseSchema),
});

export type ConformanceCase = z.infer<typeof conformanceCaseSchema>;

export interface LoadedCase {
  /** Path of the YAML file relative to the root folder given to the loader. */
  file: string;
  /** The top-level folder under the root (`aggregates`, `withkeyword`, …); `.` for files at the root. */
  dir: string;
  case: ConformanceCase;
}

/** A file that could not be read as a case file: it counts as failed cases of its folder. */
export interface BrokenCaseFile {
  file: string;
  dir: string;
  reason: string;
}

export interface LoadedCases {
  cases: LoadedCase[];
  broken: BrokenCaseFile[];
}

async function listYamlFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .sort();
}

function topLevelDir(relativeFile: string): string {
  const parts = relativeFile.split(path.sep);
  return parts.length > 1 ? parts[0]! : ".";
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`).join("; ");
}

/** Reads every `*.yaml` / `*.yml` case file below `root`, in a stable (sorted) order. */
export async function loadConformanceCases(root: string): Promise<LoadedCases> {
  const cases: LoadedCase[] = [];
  const broken: BrokenCaseFile[] = [];
  for (const file of await listYamlFiles(root)) {
    const dir = topLevelDir(file);
    let document: unknown;
    try {
      document = parseYaml(await readFile(path.join(root, file), "utf8"));
    } catch (error) {
      broken.push({
        file,
        dir,
        reason: `invalid YAML: ${error instanceof Error ? error.message : String(error)}`,
      });
      continue;
    }
    const parsed = caseFileSchema.safeParse(document);
    if (!parsed.success) {
      broken.push({ file, dir, reason: `not a conformance case file: ${describeIssues(parsed.error)}` });
      continue;
    }
    for (const c of parsed.data.cases) cases.push({ file, dir, case: c });
  }
  return { cases, broken };
}

const exceptionsSchema = z.record(z.string(), z.string());

/**
 * Reads OPA's `wasm-e2e-exceptions.yaml`: a map from case note to the reason OPA's Wasm target
 * skips it.
 */
export async function loadExceptions(file: string): Promise<Map<string, string>> {
  const parsed = exceptionsSchema.safeParse(parseYaml(await readFile(file, "utf8")) ?? {});
  if (!parsed.success) {
    throw new Error(`${file}: expected a map of "<folder>/<note>": reason (${describeIssues(parsed.error)})`);
  }
  return new Map(Object.entries(parsed.data));
}
