/**
 * `writ policy check`, as `opa check`: Rego sources parsed and compiled (names, safety,
 * conflicts, recursion, arity and the type errors literals show), with the checks OPA's compiler
 * makes of every v1 module, and strict mode's (`strict`) as well. Nothing is planned or built.
 */
import { type CustomBuiltins, withCustomBuiltins } from "./builtins/index.ts";
import { compile } from "./compile/index.ts";
import type { RegoError } from "./errors.ts";
import { parseModules, type RegoSource } from "./sources.ts";
import type { RegoVersion } from "./syntax/index.ts";

export interface CheckOptions {
  /** OPA's strict mode: unused function arguments, local assignments and imports are errors. */
  strict?: boolean;
  /** How sources without a version of their own are parsed (`--v0-compatible`: 0). */
  regoVersion?: RegoVersion;
  /** Custom builtins the policies call (their declarations type-check the calls). */
  builtins?: CustomBuiltins;
}

/** Every error of `sources`, sorted by place; none when they check. */
export function checkSources(sources: readonly RegoSource[], options: CheckOptions = {}): RegoError[] {
  const { modules, errors } = parseModules(sources, options);
  // As OPA, a module that does not parse is not compiled: its errors are the parser's.
  if (errors.length > 0) return errors;
  return withCustomBuiltins(
    options.builtins,
    () => compile(modules, [], { checks: options.strict ? "strict" : "opa" }).errors,
  );
}
