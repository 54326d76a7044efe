/**
 * The builtins Writ's Rego compiler knows: name, number of arguments, and where the
 * implementation lives. `native` builtins run inside the policy module (the runtime library);
 * `host` builtins are called through the SDK's `opa_builtinN` imports and implemented in
 * JavaScript (see `../host/`), or by the SDK itself (`sprintf`, `regex.split`, `json.is_valid`,
 * `yaml.*`).
 *
 * This list is the machine-readable capability list: `writ policy capabilities` prints it.
 */

/**
 * `unavailable`: a builtin OPA has that Writ policies may not call for real (network access,
 * runtime introspection). It is known so that `with` can replace it in tests; a call that is not
 * replaced is a compile error.
 */
export type BuiltinImplementation = "native" | "host" | "unavailable";

export interface BuiltinSpec {
  name: string;
  /** Number of declared arguments. A call with one more argument binds the result to it. */
  arity: number;
  implementation: BuiltinImplementation;
  /** Operators written infix in Rego (`x + y`), for error messages. */
  infix?: string;
  /** Builtins whose value differs between evaluations (time, randomness): never constant-folded. */
  nondeterministic?: boolean;
}

const specs: BuiltinSpec[] = [
  // Comparison and unification.
  { name: "eq", arity: 2, implementation: "native", infix: "=" },
  { name: "assign", arity: 2, implementation: "native", infix: ":=" },
  { name: "equal", arity: 2, implementation: "native", infix: "==" },
  { name: "neq", arity: 2, implementation: "native", infix: "!=" },
  { name: "lt", arity: 2, implementation: "native", infix: "<" },
  { name: "lte", arity: 2, implementation: "native", infix: "<=" },
  { name: "gt", arity: 2, implementation: "native", infix: ">" },
  { name: "gte", arity: 2, implementation: "native", infix: ">=" },
  { name: "internal.member_2", arity: 2, implementation: "native", infix: "in" },
  { name: "internal.member_3", arity: 3, implementation: "native", infix: "in" },
  // Arithmetic.
  { name: "plus", arity: 2, implementation: "native", infix: "+" },
  { name: "minus", arity: 2, implementation: "native", infix: "-" },
  { name: "mul", arity: 2, implementation: "native", infix: "*" },
  { name: "div", arity: 2, implementation: "native", infix: "/" },
  { name: "rem", arity: 2, implementation: "native", infix: "%" },
  { name: "abs", arity: 1, implementation: "native" },
  { name: "round", arity: 1, implementation: "native" },
  { name: "ceil", arity: 1, implementation: "native" },
  { name: "floor", arity: 1, implementation: "native" },
  { name: "numbers.range", arity: 2, implementation: "native" },
  { name: "numbers.range_step", arity: 3, implementation: "native" },
  // Aggregates.
  { name: "count", arity: 1, implementation: "native" },
  { name: "sum", arity: 1, implementation: "native" },
  { name: "product", arity: 1, implementation: "native" },
  { name: "max", arity: 1, implementation: "native" },
  { name: "min", arity: 1, implementation: "native" },
  { name: "sort", arity: 1, implementation: "native" },
  // Sets.
  { name: "and", arity: 2, implementation: "native", infix: "&" },
  { name: "or", arity: 2, implementation: "native", infix: "|" },
  { name: "intersection", arity: 1, implementation: "native" },
  { name: "union", arity: 1, implementation: "native" },
  // Arrays.
  { name: "array.concat", arity: 2, implementation: "native" },
  { name: "array.slice", arity: 3, implementation: "native" },
  { name: "array.reverse", arity: 1, implementation: "native" },
  { name: "array.flatten", arity: 1, implementation: "native" },
  // Objects.
  { name: "object.get", arity: 3, implementation: "native" },
  { name: "object.keys", arity: 1, implementation: "native" },
  { name: "object.union", arity: 2, implementation: "native" },
  { name: "object.union_n", arity: 1, implementation: "native" },
  { name: "object.remove", arity: 2, implementation: "native" },
  { name: "object.filter", arity: 2, implementation: "native" },
  { name: "object.subset", arity: 2, implementation: "native" },
  // Strings.
  { name: "concat", arity: 2, implementation: "native" },
  { name: "contains", arity: 2, implementation: "native" },
  { name: "startswith", arity: 2, implementation: "native" },
  { name: "endswith", arity: 2, implementation: "native" },
  { name: "lower", arity: 1, implementation: "native" },
  { name: "upper", arity: 1, implementation: "native" },
  { name: "split", arity: 2, implementation: "native" },
  { name: "replace", arity: 3, implementation: "native" },
  { name: "substring", arity: 3, implementation: "native" },
  { name: "indexof", arity: 2, implementation: "native" },
  { name: "indexof_n", arity: 2, implementation: "native" },
  { name: "trim", arity: 2, implementation: "native" },
  { name: "trim_left", arity: 2, implementation: "native" },
  { name: "trim_right", arity: 2, implementation: "native" },
  { name: "trim_prefix", arity: 2, implementation: "native" },
  { name: "trim_suffix", arity: 2, implementation: "native" },
  { name: "trim_space", arity: 1, implementation: "native" },
  { name: "format_int", arity: 2, implementation: "native" },
  { name: "strings.any_prefix_match", arity: 2, implementation: "native" },
  { name: "strings.any_suffix_match", arity: 2, implementation: "native" },
  { name: "strings.count", arity: 2, implementation: "native" },
  { name: "strings.reverse", arity: 1, implementation: "native" },
  { name: "strings.replace_n", arity: 2, implementation: "native" },
  { name: "strings.split_n", arity: 3, implementation: "native" },
  { name: "sprintf", arity: 2, implementation: "host" },
  // Types.
  { name: "is_number", arity: 1, implementation: "native" },
  { name: "is_string", arity: 1, implementation: "native" },
  { name: "is_boolean", arity: 1, implementation: "native" },
  { name: "is_array", arity: 1, implementation: "native" },
  { name: "is_set", arity: 1, implementation: "native" },
  { name: "is_object", arity: 1, implementation: "native" },
  { name: "is_null", arity: 1, implementation: "native" },
  { name: "type_name", arity: 1, implementation: "native" },
  { name: "to_number", arity: 1, implementation: "native" },
  // Encoding.
  { name: "json.marshal", arity: 1, implementation: "native" },
  { name: "json.unmarshal", arity: 1, implementation: "native" },
  { name: "json.is_valid", arity: 1, implementation: "host" },
  { name: "base64.encode", arity: 1, implementation: "native" },
  { name: "base64.decode", arity: 1, implementation: "native" },
  { name: "base64url.encode", arity: 1, implementation: "native" },
  { name: "base64url.decode", arity: 1, implementation: "native" },
  { name: "base64url.encode_no_pad", arity: 1, implementation: "native" },
  // Host-implemented builtins.
  { name: "glob.match", arity: 3, implementation: "host" },
  { name: "regex.match", arity: 2, implementation: "host" },
  { name: "regex.split", arity: 2, implementation: "host" },
  { name: "net.cidr_contains", arity: 2, implementation: "host" },
  { name: "time.now_ns", arity: 0, implementation: "host", nondeterministic: true },
  { name: "time.parse_rfc3339_ns", arity: 1, implementation: "host" },
  { name: "crypto.sha256", arity: 1, implementation: "host" },
  { name: "units.parse_bytes", arity: 1, implementation: "host" },
  { name: "semver.compare", arity: 2, implementation: "host" },
  { name: "semver.is_valid", arity: 1, implementation: "host" },
  // Known, but not callable from Writ policies except through `with` replacements.
  { name: "http.send", arity: 1, implementation: "unavailable" },
  { name: "opa.runtime", arity: 0, implementation: "unavailable" },
  { name: "io.jwt.decode_verify", arity: 2, implementation: "unavailable" },
];

export const builtins: ReadonlyMap<string, BuiltinSpec> = new Map(specs.map((s) => [s.name, s]));

/** `print` takes any number of arguments and always succeeds; it is handled by the planner. */
export const PRINT = "print";

export function lookupBuiltin(name: string): BuiltinSpec | undefined {
  return builtins.get(name);
}
