/**
 * `writ policy check`, as `opa check`: Rego sources parsed and compiled (names, safety,
 * conflicts, recursion, arity and the type errors literals show), with the checks OPA's compiler
 * makes of every v1 module, and strict mode's (`strict`) as well. Nothing is planned or built.
 */
import { compile } from "./compile/index.ts";
import type { RegoError } from "./errors.ts";
import { parseModules, type RegoSource } from "./sources.ts";

export interface CheckOptions {
  /** OPA's strict mode: unused function arguments, local assignments and imports are errors. */
  strict?: boolean;
}

/** Every error of `sources`, sorted by place; none when they check. */
export function checkSources(sources: readonly RegoSource[], options: CheckOptions = {}): RegoError[] {
  const { modules, errors } = parseModules(sources);
  // As OPA, a module that does not parse is not compiled: its errors are the parser's.
  if (errors.length > 0) return errors;
  return compile(modules, [], { checks: options.strict ? "strict" : "opa" }).errors;
}
