/**
 * `writ policy fmt --v0-v1` over a folder of Rego v0 policies and their tests: each file
 * converted (`formatSource`, target `v0-v1`) into another folder, the result parsed as Rego v1,
 * and the folder's tests run twice, as Rego v0 from the original files (`--v0-compatible`) and as
 * Rego v1 from the converted ones. Used by test/rego/format/v0-v1.test.ts on a few Gatekeeper
 * folders and by bench/fmt-v0-v1.ts on all of them.
 */
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { loadPolicyInputs } from "../../src/cli/policy/inputs.ts";
import { formatSource } from "../../src/rego/format/index.ts";
import { parseModule } from "../../src/rego/syntax/index.ts";
import { runTests, type TestStatus } from "../../src/rego/tester.ts";

export interface FolderConversion {
  /** `.rego` files converted. */
  files: number;
  /** Problems: a file that cannot be converted, or whose conversion does not parse as Rego v1. */
  problems: string[];
  /** Each test's status, by name, run from the v0 sources and from the converted ones. */
  v0: Map<string, TestStatus>;
  v1: Map<string, TestStatus>;
}

/** Converts the `.rego` files of `folder` (not recursively) into `out`, then runs both test runs. */
export async function convertFolder(folder: string, out: string): Promise<FolderConversion> {
  await mkdir(out, { recursive: true });
  const names = (await readdir(folder)).filter((name) => name.endsWith(".rego")).sort();
  const problems: string[] = [];
  const converted: string[] = [];
  for (const name of names) {
    const file = path.join(folder, name);
    const result = formatSource(await readFile(file, "utf8"), file, { target: "v0-v1" });
    if (!result.ok) {
      problems.push(`${file}: ${result.errors.map((e) => e.message).join("; ")}`);
      continue;
    }
    const reparsed = parseModule(result.text, file, { regoVersion: 1 });
    if (reparsed.module === undefined) {
      problems.push(
        `${file}: converted, does not parse as v1: ${reparsed.errors.map((e) => e.message).join("; ")}`,
      );
    }
    await writeFile(path.join(out, name), result.text);
    converted.push(path.join(out, name));
  }
  return {
    files: names.length,
    problems,
    v0: await statuses(
      names.map((name) => path.join(folder, name)),
      0,
    ),
    v1: await statuses(converted, 1),
  };
}

async function statuses(files: string[], regoVersion: 0 | 1): Promise<Map<string, TestStatus>> {
  const inputs = await loadPolicyInputs(files, { bundles: false });
  const run = await runTests(inputs.sources, inputs.data, { regoVersion, optimize: false });
  if (run.errors) return new Map([["(compile)", "ERROR"]]);
  return new Map(run.results.map((r) => [r.test.name, r.status]));
}

/** The tests whose status differs between the two runs, as `name: v0 → v1`. */
export function statusChanges(conversion: FolderConversion): string[] {
  const names = new Set([...conversion.v0.keys(), ...conversion.v1.keys()]);
  return [...names]
    .filter((name) => conversion.v0.get(name) !== conversion.v1.get(name))
    .map(
      (name) => `${name}: ${conversion.v0.get(name) ?? "absent"} → ${conversion.v1.get(name) ?? "absent"}`,
    );
}
