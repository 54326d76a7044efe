/**
 * Host builtins: the builtins a policy module calls through the SDK's `opa_builtinN` imports,
 * implemented in JavaScript by the reference builtins of the plan stage.
 *
 * The SDK marshals arguments and results as JSON, so values cross as plain JSON (sets arrive as
 * arrays); builtins that need sets or exact big numbers are native in the module instead. A
 * builtin that fails (a type error, a bad argument) is undefined, as in OPA's Wasm target.
 *
 * The SDK answers a few builtins itself and never asks for them (`sprintf` with sprintf-js,
 * which lacks Go's verbs such as `%v`); Writ's module therefore names its own implementation
 * `writ.sprintf` (see `hostImportName`).
 */
import { type BuiltinContext, builtinTable, systemContext } from "../builtins/index.ts";
import { fromJSON, toJSON } from "../plan/value.ts";

export type HostBuiltin = (...args: unknown[]) => unknown;

/** Builtins the SDK implements itself in a way that differs from OPA. */
const SHADOWED_BY_SDK = new Set(["sprintf"]);

/** The name under which a module imports a host builtin. */
export function hostImportName(builtin: string): string {
  return SHADOWED_BY_SDK.has(builtin) ? `writ.${builtin}` : builtin;
}

function builtinOfImport(importName: string): string {
  return importName.startsWith("writ.") ? importName.slice("writ.".length) : importName;
}

/** Whether `hostBuiltinsFor` can implement the builtin a module imports as `importName`. */
export function hasHostBuiltin(importName: string): boolean {
  return builtinTable.has(builtinOfImport(importName));
}

/**
 * The `customBuiltins` argument of the SDK's `loadPolicy` for a module that imports `names`.
 * `context` gives the clock: one reading per evaluation is the caller's to arrange (a fresh
 * context per evaluation); by default the clock is read at the first call.
 */
export function hostBuiltinsFor(
  names: readonly string[],
  context: () => BuiltinContext = systemContext,
): Record<string, HostBuiltin> {
  const out: Record<string, HostBuiltin> = {};
  for (const importName of names) {
    const name = builtinOfImport(importName);
    const def = builtinTable.get(name);
    if (!def) throw new Error(`no host implementation of builtin ${name}`);
    out[importName] = (...args: unknown[]) => {
      const result = def.fn(args.map(fromJSON), context());
      return result === undefined ? undefined : toJSON(result);
    };
  }
  return out;
}
