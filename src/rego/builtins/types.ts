/**
 * OPA's type language for builtin declarations, as its capabilities file writes it
 * (`v1/types/types.go` marshalled to JSON).
 */

export type OpaType =
  | { type: "any"; of?: OpaType[] | OpaType }
  | { type: "null" | "boolean" | "number" | "string" }
  | { type: "array"; static?: OpaType[]; dynamic?: OpaType }
  | { type: "set"; of?: OpaType }
  | {
      type: "object";
      static?: Array<{ key: unknown; value: OpaType }>;
      dynamic?: { key: OpaType; value: OpaType };
    }
  | { type: "function"; args?: OpaType[]; result?: OpaType; variadic?: OpaType };

export interface FunctionDecl {
  type: "function";
  args?: OpaType[];
  result?: OpaType;
  variadic?: OpaType;
}

/** One builtin as OPA declares it. */
export interface BuiltinDeclaration {
  name: string;
  decl: FunctionDecl;
  /** Operators written infix in Rego (`x + y`). */
  infix?: string;
  /** A relation (`walk`) enumerates its results instead of returning one value. */
  relation?: boolean;
  deprecated?: boolean;
  /** Its value differs between evaluations (time, randomness, network). */
  nondeterministic?: boolean;
}

export type BuiltinImplementation = "native" | "host" | "unavailable" | "custom";

export interface BuiltinSpec {
  name: string;
  /** Number of declared arguments. A call with one more argument binds the result to it. */
  arity: number;
  implementation: BuiltinImplementation;
  /** Why an `unavailable` builtin cannot be called. */
  reason?: string;
  /** Operators written infix in Rego (`x + y`), for error messages. */
  infix?: string;
  /** Builtins whose value differs between evaluations (time, randomness): never constant-folded. */
  nondeterministic?: boolean;
  /** OPA's declaration (argument and result types). */
  declaration: BuiltinDeclaration;
}
