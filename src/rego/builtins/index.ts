/** Builtins: declarations, where each is implemented, and the JavaScript implementations. */
import "./impl/index.ts";

export {
  activeCustomBuiltins,
  allBuiltins,
  type BuiltinSpec,
  lookupBuiltin,
  PRINT,
  withCustomBuiltins,
} from "./catalog.ts";
export {
  type CustomBuiltin,
  CustomBuiltinError,
  CustomBuiltins,
  customDeclarationSchema,
  defineCustomBuiltins,
  loadCustomBuiltins,
} from "./custom.ts";
export { declarations, OPA_FEATURES, OPA_FUTURE_KEYWORDS, OPA_VERSION } from "./declarations.ts";
export { type GoArg, goSprintf } from "./impl/core.ts";
export {
  type BuiltinContext,
  type BuiltinDef,
  BuiltinError,
  builtinTable,
  callBuiltin,
  systemContext,
} from "./registry.ts";
export type { BuiltinDeclaration, OpaType } from "./types.ts";
