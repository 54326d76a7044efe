/** `writ policy build`: Rego sources to an OPA bundle for the Wasm target. */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { buildModules, parseModules } from "../../rego/build.ts";
import { createBundle, type DataObject, insertData, isDataObject } from "../../rego/bundle/index.ts";
import { CUSTOM_BUILTINS_METADATA } from "../../rego/policy.ts";
import type { Module } from "../../rego/syntax/ast.ts";
import { checkArgs, helpOption, parseCommandArgs, v0Compatible } from "./args.ts";
import { builtinsOption, builtinsUsage, loadBuiltinsOption } from "./builtins.ts";
import { InputError, loadPolicyInputs, readDataFile } from "./inputs.ts";
import { formatBytes, reportFailure, reportRegoErrors } from "./output.ts";

const command = "writ policy build";

export const buildUsage = `usage: writ policy build <path>... -e <entrypoint>... [-o bundle.tar.gz] [--data file.json]... [--v0-compatible]

Compiles every .rego file under the paths into one WebAssembly module and writes an OPA bundle
in the layout of \`opa build -t wasm\` (/policy.wasm, /data.json, /.manifest and the sources).
data.json, data.yaml and data.yml files under a folder are merged into data at their folder's
path. Errors are printed as file:line:col: code: message; the exit code is then 1. The
manifest records the sources' Rego version (rego_version), as OPA's does. The module is
metered: the gateway stops an evaluation of it at policy.time_budget_ms on its own thread; it
calls the host builtin writ.$budget, which another OPA SDK host must give as a function that
returns undefined, unless the bundle is built with --no-budget.

options:
  -e, --entrypoint <rule>  a rule to evaluate, as writ/decision or data.writ.decision
                           (repeatable, at least one)
  -o, --output <file>      where to write the bundle (default: bundle.tar.gz)
      --data <file>        a JSON or YAML file merged into data at its root (repeatable)
  -r, --revision <text>    the bundle's revision (default: sha256 of its contents)
      --no-budget          a module that is not metered: any OPA SDK loads it as it is,
                           and the gateway evaluates it on a worker thread, ended when it
                           runs past its budget
${builtinsUsage}
                           (the manifest records those the policy calls, and loading
                           the bundle without them is refused)
${v0Compatible.usage}
  -h, --help               show this text`;

const options = {
  entrypoint: { type: "string", short: "e", multiple: true },
  output: { type: "string", short: "o" },
  data: { type: "string", multiple: true },
  revision: { type: "string", short: "r" },
  "no-budget": { type: "boolean" },
  ...builtinsOption,
  ...v0Compatible.option,
  ...helpOption,
} as const;

const argsSchema = z.object({
  paths: z.array(z.string()).min(1, "name the folder (or .rego files) holding the policy"),
  entrypoint: z.preprocess(
    (value) => value ?? [],
    z
      .array(z.string().min(1, "an entrypoint cannot be empty"))
      .min(1, "name at least one entrypoint, e.g. -e writ/decision"),
  ),
  output: z.string().min(1, "-o needs a file name").default("bundle.tar.gz"),
  data: z.array(z.string()).default([]),
  revision: z.string().optional(),
  "no-budget": z.boolean().default(false),
  builtins: z.array(z.string()).optional(),
  "v0-compatible": z.boolean().default(false),
});

/** The leading constant keys of each rule's path under `data` (`package a.b` + `c[x]` → a, b, c). */
function rulePaths(modules: readonly Module[]): string[][] {
  const paths: string[][] = [];
  for (const m of modules) {
    for (const rule of m.rules) {
      const ref = rule.head.ref;
      const keys = ref.type === "var" ? [ref.name] : [];
      if (ref.type === "ref" && ref.head.type === "var") {
        keys.push(ref.head.name);
        for (const t of ref.path) {
          if (t.type !== "string") break;
          keys.push(t.value);
        }
      }
      paths.push([...m.package.path, ...keys]);
    }
  }
  return paths;
}

function hasDataAt(data: DataObject, keys: readonly string[]): boolean {
  let node: unknown = data;
  for (const k of keys) {
    if (!isDataObject(node) || !Object.hasOwn(node, k)) return false;
    node = node[k];
  }
  return true;
}

/**
 * Entrypoints that name nothing: no rule lies under them or above them, no package, no data. A
 * typo there would give a module that is always undefined, so it is an error.
 */
function unknownEntrypoints(
  entrypoints: readonly string[],
  modules: readonly Module[],
  data: DataObject,
): string[] {
  const paths = rulePaths(modules);
  const isPrefix = (a: readonly string[], b: readonly string[]) =>
    a.length <= b.length && a.every((k, i) => k === b[i]);
  return entrypoints.filter((e) => {
    const keys = e.split("/");
    return !hasDataAt(data, keys) && !paths.some((p) => isPrefix(keys, p) || isPrefix(p, keys));
  });
}

/** `data.writ.decision` → `writ/decision`; `writ/decision` stays. */
export function entrypointPath(entrypoint: string): string {
  return entrypoint.startsWith("data.") ? entrypoint.slice("data.".length).split(".").join("/") : entrypoint;
}

export async function buildCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(command, buildUsage, () =>
    parseArgs({ args: argv, options, allowPositionals: true, strict: true }),
  );
  if (typeof parsed === "number") return parsed;
  const checked = checkArgs(command, argsSchema, { ...parsed.values, paths: parsed.positionals });
  if (!checked.ok) return checked.exitCode;
  const args = checked.value;
  try {
    const builtins = await loadBuiltinsOption(args.builtins);
    const inputs = await loadPolicyInputs(args.paths, { bundles: false });
    for (const file of args.data) insertData(inputs.data, [], await readDataFile(file), file);
    if (inputs.sources.length === 0) {
      throw new InputError(
        `no .rego files in ${args.paths.join(", ")}: point ${command} at the folder holding the policy`,
      );
    }
    const byBundlePath = new Map<string, string>();
    for (const s of inputs.sources) {
      const other = byBundlePath.get(s.bundlePath);
      if (other !== undefined) {
        throw new InputError(
          `${other} and ${s.file} would both be stored as /${s.bundlePath}: build from one folder, or rename one`,
        );
      }
      byBundlePath.set(s.bundlePath, s.file);
    }

    const entrypoints = args.entrypoint.map(entrypointPath);
    const regoVersion = v0Compatible.regoVersion(args);
    const { modules, errors } = parseModules(inputs.sources, { regoVersion });
    if (errors.length > 0) return reportRegoErrors(command, errors, "no bundle written");
    const unknown = unknownEntrypoints(entrypoints, modules, inputs.data);
    if (unknown.length > 0) {
      throw new InputError(
        `no rule, package or data at ${unknown.map((e) => `data.${e.split("/").join(".")}`).join(", ")}: check the entrypoint's spelling (-e package/rule)`,
      );
    }
    const built = buildModules(modules, { entrypoints, builtins, budget: !args["no-budget"] });
    if (!built.wasm) return reportRegoErrors(command, built.errors, "no bundle written");

    const bundle = await createBundle({
      wasm: built.wasm,
      entrypoints: built.entrypoints,
      data: inputs.data,
      sources: inputs.sources.map((s) => ({ file: s.bundlePath, source: s.source })),
      regoVersion,
      revision: args.revision,
      ...(built.customBuiltins.length > 0
        ? { metadata: { [CUSTOM_BUILTINS_METADATA]: built.customBuiltins } }
        : {}),
    });
    await mkdir(path.dirname(path.resolve(args.output)), { recursive: true });
    try {
      await writeFile(args.output, bundle.bytes);
    } catch (error) {
      throw new InputError(
        `cannot write ${args.output}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    console.log(
      `${args.output}: ${formatBytes(bundle.bytes.byteLength)}, entrypoints ${built.entrypoints.join(", ")}, revision ${bundle.manifest.revision}`,
    );
    return 0;
  } catch (error) {
    return reportFailure(command, error);
  }
}
