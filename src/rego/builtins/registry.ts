/**
 * The registry of builtin implementations in JavaScript, and the operand helpers they share.
 *
 * An implementation file (`impl/<area>.ts`) calls {@link define} once per builtin; the builtin
 * must be declared in `declarations.ts` (its arity and types come from there). The same
 * implementation serves the plan interpreter and, for builtins that are not native in the
 * runtime module, the policy module's host calls (`../host/`).
 *
 * Errors follow OPA's `topdown`: an implementation throws {@link BuiltinError} with OPA's
 * message (`operand 1 must be string but got number`, `divide by zero`, …). OPA's Wasm target
 * turns builtin errors into undefined, so the table's `fn` returns undefined for them; `impl`
 * keeps the error (prefixed with the builtin's name) for strict builtin errors and tests.
 */
import {
  type ArrayValue,
  asPlainInt,
  makeObject,
  makeString,
  type NumberValue,
  numberFromBigInt,
  type ObjectValue,
  type SetValue,
  type Value,
} from "../plan/value.ts";
import { declarations } from "./declarations.ts";

export type BuiltinErrorCode = "eval_type_error" | "eval_builtin_error";

/** An error raised by a builtin, with OPA's code and message (`name: detail`). */
export class BuiltinError extends Error {
  constructor(
    readonly code: BuiltinErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "BuiltinError";
  }
}

/**
 * What a builtin may read besides its arguments. One context lives for one evaluation, so the
 * clock, random numbers and generated UUIDs are the same for every call within it (as in OPA,
 * where they are fixed per query).
 */
export interface BuiltinContext {
  /** Nanoseconds since the Unix epoch; constant within one evaluation. */
  now(): bigint;
  /** A value memoized for this evaluation under `key` (`rand.intn`, `uuid.rfc4122`). */
  memo<T>(key: string, compute: () => T): T;
  /**
   * What `opa.runtime()` answers: the document the host describes itself with (`../runtime-info.ts`),
   * or an empty object when it gives none, as OPA's library does without `rego.Runtime`.
   */
  runtime(): Value;
}

export type BuiltinFn = (args: readonly Value[], ctx: BuiltinContext) => Value | undefined;

export interface BuiltinDef {
  readonly arity: number;
  /** Returns undefined when the result is undefined or the builtin raised an error. */
  readonly fn: BuiltinFn;
  /** Like `fn`, but throws {@link BuiltinError} (message prefixed with the builtin's name). */
  readonly impl: BuiltinFn;
}

/**
 * A fresh context for one evaluation: the clock (the system's by default) read once, an empty
 * memo, and the runtime document `opa.runtime()` answers (an empty object by default).
 */
export function systemContext(
  clock: () => bigint = () => BigInt(Date.now()) * 1_000_000n,
  runtime: Value = makeObject(),
): BuiltinContext {
  let now: bigint | undefined;
  const memo = new Map<string, unknown>();
  return {
    now: () => (now ??= clock()),
    runtime: () => runtime,
    memo<T>(key: string, compute: () => T): T {
      if (memo.has(key)) return memo.get(key) as T;
      const value = compute();
      memo.set(key, value);
      return value;
    },
  };
}

const declaredArity = new Map(declarations.map((d) => [d.name, d.decl.args?.length ?? 0]));

const table = new Map<string, BuiltinDef>();

/** The JavaScript builtins by name. */
export const builtinTable: ReadonlyMap<string, BuiltinDef> = table;

/**
 * A table entry for `impl`: `impl` keeps its errors (prefixed with the builtin's name), `fn`
 * turns them into undefined. Anything but a {@link BuiltinError} is a bug and passes through.
 */
export function builtinDef(name: string, arity: number, impl: BuiltinFn): BuiltinDef {
  const named: BuiltinFn = (args, ctx) => {
    try {
      return impl(args, ctx);
    } catch (e) {
      if (e instanceof BuiltinError) throw new BuiltinError(e.code, `${name}: ${e.message}`);
      throw e;
    }
  };
  const lenient: BuiltinFn = (args, ctx) => {
    try {
      return impl(args, ctx);
    } catch (e) {
      if (e instanceof BuiltinError) return undefined;
      throw e;
    }
  };
  return { arity, fn: lenient, impl: named };
}

/** Registers the implementation of a declared builtin. */
export function define(name: string, impl: BuiltinFn): void {
  const arity = declaredArity.get(name);
  if (arity === undefined) throw new Error(`builtin ${name} is not declared in declarations.ts`);
  if (table.has(name)) throw new Error(`builtin ${name} is defined twice`);
  table.set(name, builtinDef(name, arity, impl));
}

// ------------------------------------------------------------------------------------ operands

/** OPA's `ast.ValueName`, which is also `type_name`. */
export function typeName(v: Value): string {
  return v.type;
}

/** `operand N must be T but got U` (or `one of {T1, T2}`). */
export function typeError(pos: number, got: Value, ...expected: string[]): never {
  const want = expected.length === 1 ? expected[0] : `one of {${expected.join(", ")}}`;
  throw new BuiltinError("eval_type_error", `operand ${pos} must be ${want} but got ${typeName(got)}`);
}

export function elementError(pos: number, composite: Value, got: Value, expected: string): never {
  const t = typeName(composite);
  throw new BuiltinError(
    "eval_type_error",
    `operand ${pos} must be ${t} of ${expected}s but got ${t} containing ${typeName(got)}`,
  );
}

/** A builtin error (`eval_builtin_error`) with OPA's message. */
export function fail(message: string): never {
  throw new BuiltinError("eval_builtin_error", message);
}

export function arg(args: readonly Value[], i: number): Value {
  const v = args[i];
  if (v === undefined) throw new BuiltinError("eval_type_error", `missing operand ${i + 1}`);
  return v;
}

export function stringArg(args: readonly Value[], i: number): string {
  const v = arg(args, i);
  return v.type === "string" ? v.value : typeError(i + 1, v, "string");
}

export function numberArg(args: readonly Value[], i: number): NumberValue {
  const v = arg(args, i);
  return v.type === "number" ? v : typeError(i + 1, v, "number");
}

export function booleanArg(args: readonly Value[], i: number): boolean {
  const v = arg(args, i);
  return v.type === "boolean" ? v.value : typeError(i + 1, v, "boolean");
}

export function arrayArg(args: readonly Value[], i: number): ArrayValue {
  const v = arg(args, i);
  return v.type === "array" ? v : typeError(i + 1, v, "array");
}

export function objectArg(args: readonly Value[], i: number): ObjectValue {
  const v = arg(args, i);
  return v.type === "object" ? v : typeError(i + 1, v, "object");
}

export function setArg(args: readonly Value[], i: number): SetValue {
  const v = arg(args, i);
  return v.type === "set" ? v : typeError(i + 1, v, "set");
}

/** OPA's `IntOperand`: a number written as a plain integer. */
export function intArg(args: readonly Value[], i: number): number {
  const n = numberArg(args, i);
  const int = asPlainInt(n);
  if (int === undefined)
    throw new BuiltinError(
      "eval_type_error",
      `operand ${i + 1} must be integer number but got floating-point number`,
    );
  return Number(int);
}

/** OPA's `BigIntOperand`: any integral number (`1.0` included). */
export function bigIntArg(args: readonly Value[], i: number): bigint {
  const v = arg(args, i);
  if (v.type !== "number") return typeError(i + 1, v, "integer");
  if (v.int === undefined)
    throw new BuiltinError(
      "eval_type_error",
      `operand ${i + 1} must be integer number but got floating-point number`,
    );
  return v.int;
}

/** The strings of an array or set (OPA's `StringSliceOperand`). */
export function stringsOf(v: Value, pos: number): string[] {
  const items =
    v.type === "array" ? v.items : v.type === "set" ? v.elements() : typeError(pos, v, "array", "set");
  return items.map((x) => (x.type === "string" ? x.value : elementError(pos, v, x, "string")));
}

/** A string, or the strings of an array or set. */
export function stringOrStrings(v: Value, pos: number): string[] {
  if (v.type === "string") return [v.value];
  if (v.type === "array" || v.type === "set") return stringsOf(v, pos);
  return typeError(pos, v, "string", "set", "array");
}

export function str(s: string): Value {
  return makeString(s);
}

export function int(n: number | bigint): NumberValue {
  return numberFromBigInt(BigInt(n));
}

/** Calls a builtin by name; undefined when it is undefined or raises an error. */
export function callBuiltin(
  name: string,
  args: readonly Value[],
  ctx: BuiltinContext = systemContext(),
): Value | undefined {
  const def = table.get(name);
  if (!def) throw new Error(`unknown builtin ${name}`);
  return def.fn(args, ctx);
}
