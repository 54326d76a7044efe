/**
 * The gateway's custom builtins (`policy.builtins` in the configuration): ES modules whose
 * `builtins` export declares and implements functions the policies may call, loaded once and
 * given to every policy engine (the live policy's and a shadow policy's).
 */
import { CustomBuiltinError, type CustomBuiltins, loadCustomBuiltins } from "../rego/builtins/custom.ts";
import { PolicyLoadError } from "./errors.ts";

export type { CustomBuiltins };

/** Loads the modules at `files` (absolute, or relative to `base`). Throws PolicyLoadError. */
export async function loadPolicyBuiltins(files: readonly string[], base?: string): Promise<CustomBuiltins> {
  try {
    return await loadCustomBuiltins(files, base);
  } catch (error) {
    if (error instanceof CustomBuiltinError)
      throw new PolicyLoadError("the custom builtins (policy.builtins) cannot be loaded", [error.message]);
    throw error;
  }
}
