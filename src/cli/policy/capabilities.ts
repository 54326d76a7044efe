/** `writ policy capabilities`: the builtins Writ policies can call, as Writ's list or OPA's capabilities JSON. */
import { parseArgs } from "node:util";
import { allBuiltins, OPA_FEATURES, OPA_FUTURE_KEYWORDS, OPA_VERSION } from "../../rego/builtins/index.ts";
import { helpOption, parseCommandArgs, usageError } from "./args.ts";
import { builtinsOption, builtinsUsage, loadBuiltinsOption } from "./builtins.ts";
import { reportFailure } from "./output.ts";

const command = "writ policy capabilities";

export const capabilitiesUsage = `usage: writ policy capabilities [--format writ|opa] [--builtins <module.mjs>]...

Prints every builtin of OPA ${OPA_VERSION} and how Writ runs it.

  --format writ   (default) a JSON array of {"name", "arity", "implementation", "reason"?}:
                  "native" runs inside the policy module, "host" is called through the SDK,
                  "unavailable" is known (tests can replace it with \`with\`) but cannot be
                  called for real; "reason" says why; "custom" comes from --builtins.
  --format opa    a capabilities file in OPA's format (builtins with their declared types,
                  future keywords, features, Wasm ABI versions) listing only what Writ runs,
                  for OPA's own tooling: opa check --capabilities, Regal.

options:
  --format <writ|opa>
${builtinsUsage}
  -h, --help           show this text`;

/** The Wasm ABI Writ's modules follow (see src/rego/runtime/assembly/index.ts). */
const WASM_ABI = { version: 1, minor_version: 3 };

export async function capabilitiesCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(command, capabilitiesUsage, () =>
    parseArgs({
      args: argv,
      options: { ...helpOption, ...builtinsOption, format: { type: "string", default: "writ" } },
      allowPositionals: true,
      strict: true,
    }),
  );
  if (typeof parsed === "number") return parsed;
  if (parsed.positionals.length > 0) {
    return usageError(command, `unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  }
  const format = parsed.values.format;
  if (format !== "writ" && format !== "opa")
    return usageError(command, `--format must be writ or opa, not ${JSON.stringify(format)}`);
  let custom: Awaited<ReturnType<typeof loadBuiltinsOption>>;
  try {
    custom = await loadBuiltinsOption(parsed.values.builtins);
  } catch (error) {
    return reportFailure(command, error);
  }
  const customSpecs = (custom?.declarations() ?? []).flatMap((d) => {
    const spec = custom?.get(d.name)?.spec;
    return spec ? [spec] : [];
  });
  const builtins = [...allBuiltins().values(), ...customSpecs];
  if (format === "opa") {
    const callable = builtins.filter((b) => b.implementation !== "unavailable");
    const capabilities = {
      builtins: [
        ...callable.map((b) => b.declaration),
        // print(…) is compiled by the planner and is not in the catalog of callable builtins.
        { name: "print", decl: { type: "function", variadic: { type: "any" } } },
      ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
      future_keywords: OPA_FUTURE_KEYWORDS,
      features: OPA_FEATURES,
      wasm_abi_versions: [WASM_ABI],
    };
    console.log(JSON.stringify(capabilities, null, 2));
    return 0;
  }
  const list = builtins.map(({ name, arity, implementation, reason }) => ({
    name,
    arity,
    implementation,
    ...(reason ? { reason } : {}),
  }));
  console.log(JSON.stringify(list, null, 2));
  return 0;
}
