/**
 * Where each builtin is implemented, derived from the one declaration of each builtin
 * (`declarations.ts`, OPA's capabilities) and the implementations that exist:
 *
 * - `native`: runs inside the policy module (the runtime library, `../runtime/`);
 * - `host`: called through the SDK's `opa_builtinN` imports and implemented in JavaScript
 *   (`impl/`, registered with `define`);
 * - `unavailable`: declared by OPA but not callable from Writ policies, with the reason. It is
 *   known so that `with` can replace it in tests; a call that is not replaced is a compile error;
 * - `custom`: a deployment's own builtin (`custom.ts`), known only to builds run inside
 *   {@link withCustomBuiltins}.
 *
 * `writ policy capabilities` prints this list.
 */
import { declarations } from "./declarations.ts";
import "./impl/index.ts";
import type { CustomBuiltins } from "./custom.ts";
import { builtinTable } from "./registry.ts";
import type { BuiltinDeclaration, BuiltinSpec } from "./types.ts";

export type { BuiltinImplementation, BuiltinSpec } from "./types.ts";

/** Builtins the runtime module implements itself (`../runtime/assembly/builtins/`). */
const NATIVE = new Set([
  "eq", "assign", "equal", "neq", "lt", "lte", "gt", "gte", "internal.member_2", "internal.member_3",
  "plus", "minus", "mul", "div", "rem", "abs", "round", "ceil", "floor", "numbers.range",
  "count", "sum", "product", "max", "min", "sort", "and", "or",
  "intersection", "union", "array.concat", "array.slice", "array.reverse", "array.flatten",
  "object.get", "object.keys", "object.union", "object.union_n", "object.remove", "object.filter",
  "object.subset", "concat", "contains", "startswith", "endswith", "lower", "upper", "split",
  "replace", "substring", "indexof", "indexof_n", "trim", "trim_left", "trim_right",
  "trim_prefix", "trim_suffix", "trim_space", "format_int", "strings.any_prefix_match",
  "strings.any_suffix_match", "strings.count", "strings.reverse", "strings.replace_n",
  "strings.split_n", "is_number", "is_string", "is_boolean", "is_array", "is_set", "is_object",
  "is_null", "type_name", "internal.print", "to_number", "json.marshal", "json.unmarshal", "base64.encode",
  "base64.decode", "base64url.encode", "base64url.decode", "base64url.encode_no_pad",
]); // biome-ignore format: a list of names

/** Builtins a policy decision must not use: they wait on the network. */
const UNAVAILABLE: Record<string, string> = {
  "http.send":
    "a policy decision must not wait on the network; fetch the data into the input or data instead",
  "net.lookup_ip_addr":
    "a policy decision must not wait on DNS; resolve addresses before the call reaches Writ",
  "providers.aws.sign_req": "it signs requests for http.send, which is unavailable",
};

/** `print` takes any number of arguments and always succeeds; it is handled by the planner. */
export const PRINT = "print";

function specOf(d: BuiltinDeclaration): BuiltinSpec {
  const base = {
    name: d.name,
    arity: d.decl.args?.length ?? 0,
    declaration: d,
    ...(d.infix ? { infix: d.infix } : {}),
    ...(d.nondeterministic ? { nondeterministic: true } : {}),
  };
  const unavailable = UNAVAILABLE[d.name];
  if (unavailable) return { ...base, implementation: "unavailable", reason: unavailable };
  if (NATIVE.has(d.name)) return { ...base, implementation: "native" };
  if (builtinTable.has(d.name)) return { ...base, implementation: "host" };
  // Only after regenerating the declarations from a newer OPA, until the new builtin gets its
  // implementation (see README.md); `writ policy capabilities` and its test show such a gap.
  return {
    ...base,
    implementation: "unavailable",
    reason: "declared by a newer OPA than this Writ implements: add it under src/rego/builtins/impl/",
  };
}

let catalog: ReadonlyMap<string, BuiltinSpec> | undefined;

/**
 * Every builtin and where it runs. Derived at the first look, not when this module loads: the
 * implementation files must all have registered, and some of them (rego.parse_module) reach the
 * compiler, which looks builtins up, through imports of their own.
 */
export function allBuiltins(): ReadonlyMap<string, BuiltinSpec> {
  catalog ??= new Map(declarations.filter((d) => d.name !== PRINT).map((d) => [d.name, specOf(d)]));
  return catalog;
}

/**
 * The custom builtins of the build under way. The compiler's passes look builtins up by name
 * from many places; a build is synchronous, so the set is in force exactly while
 * {@link withCustomBuiltins} runs it, and never leaks into another build.
 */
let active: CustomBuiltins | undefined;

/** Runs `build` (synchronous) with `custom` known to {@link lookupBuiltin}. */
export function withCustomBuiltins<T>(custom: CustomBuiltins | undefined, build: () => T): T {
  const outer = active;
  active = custom;
  try {
    return build();
  } finally {
    active = outer;
  }
}

/** The custom builtins of the build under way, if any. */
export function activeCustomBuiltins(): CustomBuiltins | undefined {
  return active;
}

export function lookupBuiltin(name: string): BuiltinSpec | undefined {
  return allBuiltins().get(name) ?? active?.get(name)?.spec;
}
