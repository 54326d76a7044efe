/**
 * `--builtins <module.mjs>` (repeatable) on the policy commands: custom builtins, as OPA users
 * register Go builtins (src/rego/builtins/custom.ts says what a module exports).
 */
import { CustomBuiltinError, type CustomBuiltins, loadCustomBuiltins } from "../../rego/builtins/index.ts";
import { InputError } from "./inputs.ts";

/** The option, to spread into a command's `parseArgs` options. */
export const builtinsOption = { builtins: { type: "string", multiple: true } } as const;

export const builtinsUsage = `  --builtins <module.mjs>
                       an ES module of custom builtins (its \`builtins\` export: name, decl,
                       impl); repeatable. See README, "Custom builtins"`;

/** The custom builtins of `files` (none: undefined). Throws InputError naming the module. */
export async function loadBuiltinsOption(
  files: readonly string[] | undefined,
): Promise<CustomBuiltins | undefined> {
  if (files === undefined || files.length === 0) return undefined;
  try {
    return await loadCustomBuiltins(files);
  } catch (error) {
    if (error instanceof CustomBuiltinError) throw new InputError(error.message);
    throw error;
  }
}
