/**
 * Host builtins: the builtins a policy module calls through the SDK's `opa_builtinN` imports,
 * implemented in JavaScript by the registry's implementations (`../builtins/`).
 *
 * Two conventions, told apart by the import name:
 *
 * - `writ.<name>` and `writ.strict.<name>` (modules Writ builds): each argument crosses as a
 *   string holding its Rego value text (`opa_value_dump`: sets stay sets, numbers stay exact),
 *   and the result comes back the same way, so a host builtin sees and returns exactly what a
 *   native one would. The SDK only ever sees strings. `writ.<name>` turns a builtin error into
 *   undefined, as OPA's Wasm target does; `writ.strict.<name>` throws it (strict builtin errors),
 *   and is also what a strict module calls after a native builtin came back undefined, to learn
 *   the error it raised.
 * - `<name>` (modules built by a real `opa`): arguments and result as plain JSON, as the SDK
 *   marshals them (sets arrive as arrays). Builtins the SDK answers itself never reach here.
 */
import {
  type BuiltinContext,
  type BuiltinDef,
  BuiltinError,
  builtinTable,
  type CustomBuiltins,
  systemContext,
} from "../builtins/index.ts";
import { fromJSON, parseValueText, toJSON, toValueText } from "../plan/value.ts";

export type HostBuiltin = (...args: unknown[]) => unknown;

/**
 * The host builtin a metered module calls when its fuel runs out (`wasm/meter.ts`): a name no
 * Rego source can spell (as the trace builtin's), imported as `writ.$budget`. Its implementation
 * here sets no deadline; `rego/policy.ts` replaces it with one that stops an evaluation past its
 * budget.
 */
export const BUDGET_BUILTIN = "$budget";

const PREFIX = "writ.";
const STRICT_PREFIX = "writ.strict.";

/** The name under which a Writ module imports a host builtin. */
export function hostImportName(builtin: string, strict = false): string {
  return (strict ? STRICT_PREFIX : PREFIX) + builtin;
}

interface ImportConvention {
  builtin: string;
  valueText: boolean;
  strict: boolean;
}

function conventionOf(importName: string): ImportConvention {
  if (importName.startsWith(STRICT_PREFIX))
    return { builtin: importName.slice(STRICT_PREFIX.length), valueText: true, strict: true };
  if (importName.startsWith(PREFIX))
    return { builtin: importName.slice(PREFIX.length), valueText: true, strict: false };
  return { builtin: importName, valueText: false, strict: false };
}

/**
 * The builtin a module imports as `importName` (`writ.strict.x.y` → `x.y`; `writ.opa.runtime` and
 * `opa.runtime` are `opa.runtime`).
 */
export function importedBuiltin(importName: string): string {
  return conventionOf(importName).builtin;
}

function definition(builtin: string, custom: CustomBuiltins | undefined): BuiltinDef | undefined {
  return builtinTable.get(builtin) ?? custom?.get(builtin)?.def;
}

/**
 * Whether `hostBuiltinsFor` can implement the builtin a module imports as `importName` (with
 * the custom builtins `custom`).
 */
export function hasHostBuiltin(importName: string, custom?: CustomBuiltins): boolean {
  const { builtin } = conventionOf(importName);
  return builtin === BUDGET_BUILTIN || definition(builtin, custom) !== undefined;
}

/** A builtin error surfacing from a strict module, with OPA's code in its message. */
export class StrictBuiltinError extends Error {
  readonly code: BuiltinError["code"];

  constructor(error: BuiltinError) {
    super(`${error.code}: ${error.message}`, { cause: error });
    this.name = "StrictBuiltinError";
    this.code = error.code;
  }
}

function valueTextArg(x: unknown): string {
  if (typeof x !== "string") throw new TypeError(`host builtin argument is not value text: ${typeof x}`);
  return x;
}

/**
 * The `customBuiltins` argument of the SDK's `loadPolicy` for a module that imports `names`.
 * `context` gives the evaluation's context (clock, per-query memo): the caller starts a fresh
 * one per evaluation. `custom` implements the module's custom builtins.
 */
export function hostBuiltinsFor(
  names: readonly string[],
  context: () => BuiltinContext = systemContext,
  custom?: CustomBuiltins,
): Record<string, HostBuiltin> {
  const out: Record<string, HostBuiltin> = {};
  for (const importName of names) {
    const { builtin, valueText, strict } = conventionOf(importName);
    if (builtin === BUDGET_BUILTIN) {
      // Undefined: the SDK writes nothing into the module, which may be inside any runtime loop.
      out[importName] = () => undefined;
      continue;
    }
    const def = definition(builtin, custom);
    if (!def) throw new Error(`no host implementation of builtin ${builtin}`);
    if (!valueText) {
      out[importName] = (...args: unknown[]) => {
        const result = def.fn(args.map(fromJSON), context());
        return result === undefined ? undefined : toJSON(result);
      };
      continue;
    }
    out[importName] = (...args: unknown[]) => {
      const values = args.map((a) => parseValueText(valueTextArg(a)));
      let result: ReturnType<typeof def.impl>;
      try {
        result = def.impl(values, context());
      } catch (error) {
        if (!(error instanceof BuiltinError)) throw error;
        if (strict) throw new StrictBuiltinError(error);
        return undefined;
      }
      return result === undefined ? undefined : toValueText(result);
    };
  }
  return out;
}
