/** `writ policy eval`: evaluate a query against Rego sources or a bundle and print the result set. */
import { parseArgs } from "node:util";
import { z } from "zod";
import { buildPolicy, type RegoSource } from "../../rego/build.ts";
import { type DataObject, insertData } from "../../rego/bundle/index.ts";
import { processRuntime } from "../../rego/opa-runtime.ts";
import { loadCompiledPolicy, loadPolicyFromBundle } from "../../rego/policy.ts";
import type { Body } from "../../rego/syntax/ast.ts";
import { parseQuery } from "../../rego/syntax/index.ts";
import { checkArgs, helpOption, parseCommandArgs, v0Compatible } from "./args.ts";
import { builtinsOption, builtinsUsage, loadBuiltinsOption } from "./builtins.ts";
import { InputError, loadPolicyInputs, readDataFile } from "./inputs.ts";
import { reportFailure, reportRegoErrors } from "./output.ts";

const command = "writ policy eval";

export const evalUsage = `usage: writ policy eval -d <path>... [-i input.json] [--v0-compatible] '<query>'

Evaluates a Rego query and prints its result set as JSON: one object of variable bindings per
result (\`[{"x": 1}]\`), \`[]\` when the query is undefined. A query that is a single term,
such as data.writ.decision, binds its value to "result": \`[{"result": …}]\`; bind a call's
value to see it (\`x := count(data.roles)\`).

With a bundle, a query naming one of its entrypoints (data.writ.decision for writ/decision)
runs the bundle's own module; other queries (or a bundle given with source folders) are
compiled from the .rego sources the bundle carries, each in the Rego version its manifest
gives it (rego_version, file_rego_versions), else the command's.

options:
  -d, --data <path>    a folder of .rego and data files, a .rego file, a JSON or YAML data
                       file (merged into data at its root), or a bundle (.tar.gz); repeatable
  -i, --input <file>   the input document, JSON (or YAML for .yaml/.yml)
  --strict-builtin-errors
                       a builtin that fails (count(null), a malformed JWT) stops the
                       evaluation with its error instead of being undefined (compiles
                       from sources)
${builtinsUsage}
${v0Compatible.usage}
  -h, --help           show this text`;

const options = {
  data: { type: "string", short: "d", multiple: true },
  input: { type: "string", short: "i" },
  "strict-builtin-errors": { type: "boolean" },
  ...builtinsOption,
  ...v0Compatible.option,
  ...helpOption,
} as const;

const argsSchema = z.object({
  positionals: z
    .array(z.string())
    .min(1, "give the query to evaluate, e.g. 'data.writ.decision'")
    .max(1, "give one query (quote it so that the shell passes it as one argument)"),
  data: z.array(z.string()).default([]),
  input: z.string().optional(),
  "strict-builtin-errors": z.boolean().default(false),
  builtins: z.array(z.string()).optional(),
  "v0-compatible": z.boolean().default(false),
});

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `data.a.b` with identifier keys → `a/b`, the entrypoint a bundle would name it by. */
function entrypointOf(body: Body): string | undefined {
  const [expr] = body;
  if (body.length !== 1 || !expr || expr.negated || expr.with.length > 0) return undefined;
  const node = expr.node;
  if (node.type !== "ref" || node.head.type !== "var" || node.head.name !== "data") return undefined;
  const keys: string[] = [];
  for (const t of node.path) {
    if (t.type !== "string" || !IDENTIFIER.test(t.value)) return undefined;
    keys.push(t.value);
  }
  return keys.join("/");
}

/** A query that is a single bare term (not a call, `some` or `every`) binds its value to `result`. */
function queryToCompile(text: string, body: Body): string {
  const [expr] = body;
  if (body.length !== 1 || !expr || expr.negated) return text;
  const node = expr.node;
  if (node.type === "call" || node.type === "some" || node.type === "every" || node.type === "body")
    return text;
  if (/\bresult\b/.test(text)) return text;
  return `result = ${text}`;
}

function print(resultSet: unknown[]): number {
  console.log(JSON.stringify(resultSet, null, 2));
  return 0;
}

export async function evalCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(command, evalUsage, () =>
    parseArgs({ args: argv, options, allowPositionals: true, strict: true }),
  );
  if (typeof parsed === "number") return parsed;
  const checked = checkArgs(command, argsSchema, { ...parsed.values, positionals: parsed.positionals });
  if (!checked.ok) return checked.exitCode;
  const args = checked.value;
  const text = args.positionals[0]!;
  const regoVersion = v0Compatible.regoVersion(args);
  const query = parseQuery(text, "query", { regoVersion });
  if (!query.body) return reportRegoErrors(command, query.errors, "nothing evaluated");

  try {
    const builtins = await loadBuiltinsOption(args.builtins);
    const inputs = await loadPolicyInputs(args.data, { bundles: true });
    if (inputs.bundles.length > 1) {
      throw new InputError(
        `give at most one bundle (got ${inputs.bundles.map((b) => b.file).join(", ")}): each holds its own module`,
      );
    }
    const input = args.input === undefined ? undefined : await readDataFile(args.input);
    const data: DataObject = {};
    const bundled = inputs.bundles[0];
    if (bundled) insertData(data, [], bundled.bundle.data, bundled.file);
    insertData(data, [], inputs.data, args.data.join(", "));

    // A bundle on its own answers its entrypoints with its own module (built without strict
    // builtin errors, so a strict evaluation compiles the sources it carries).
    let entrypoints: readonly string[] = [];
    if (bundled?.bundle.wasm && inputs.sources.length === 0 && !args["strict-builtin-errors"]) {
      const policy = await loadPolicyFromBundle(bundled.bundle, { builtins, runtime: processRuntime() });
      const entrypoint = entrypointOf(query.body);
      if (entrypoint !== undefined && policy.entrypoints.includes(entrypoint)) {
        policy.setData(data);
        return print(policy.evaluate(input, entrypoint));
      }
      entrypoints = policy.entrypoints;
    }

    const sources: RegoSource[] = [...inputs.sources];
    if (bundled) {
      for (const s of bundled.bundle.sources) sources.push({ ...s, file: `${bundled.file}#${s.file}` });
    }
    if (sources.length === 0) {
      if (bundled) {
        const names = entrypoints.map((e) => `data.${e.split("/").join(".")}`).join(", ");
        throw new InputError(
          `${bundled.file} carries no .rego sources, so it answers only its entrypoints (${names || "none"}): query one of those, or pass the source folder with -d`,
        );
      }
      throw new InputError("no .rego files to evaluate: pass a policy folder, file or bundle with -d");
    }
    const built = buildPolicy(sources, {
      queries: [{ name: "query", query: queryToCompile(text, query.body) }],
      strictBuiltinErrors: args["strict-builtin-errors"],
      builtins,
      regoVersion,
    });
    if (!built.wasm) return reportRegoErrors(command, built.errors, "nothing evaluated");
    const policy = await loadCompiledPolicy({
      wasm: built.wasm,
      hostBuiltins: built.hostBuiltins,
      data,
      builtins,
      runtime: processRuntime(),
    });
    return print(policy.evaluate(input, "query"));
  } catch (error) {
    return reportFailure(command, error);
  }
}
