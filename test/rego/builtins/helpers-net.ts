/** Shared helpers for the builtin behaviour tests: call a builtin with JSON-like values, or get its error. */
import { buildPolicy } from "../../../src/rego/build.ts";
import { BuiltinError, builtinTable, callBuiltin, systemContext } from "../../../src/rego/builtins/index.ts";
import {
  fromJSON,
  makeArray,
  makeObject,
  makeSet,
  makeString,
  toJSON,
  type Value,
} from "../../../src/rego/plan/value.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";

const ctx = () => systemContext(() => 1_700_000_000_000_000_000n);

/** A value from JSON; `{ set: [...] }` builds a set. */
export function v(x: unknown): Value {
  if (Array.isArray(x)) return makeArray(x.map(v));
  if (x !== null && typeof x === "object") {
    if ("set" in x && Array.isArray(x.set)) return makeSet(x.set.map(v));
    return makeObject(Object.entries(x).map(([k, y]) => [makeString(k), v(y)]));
  }
  return fromJSON(x);
}

/** The builtin's result (sets come back as sorted arrays, via `toJSON`), or undefined. */
export function call(name: string, ...args: unknown[]): unknown {
  const result = callBuiltin(name, args.map(v), ctx());
  return result === undefined ? undefined : toJSON(result);
}

/** The raw result value. */
export function callValue(name: string, ...args: unknown[]): Value | undefined {
  return callBuiltin(name, args.map(v), ctx());
}

/** The error the builtin raises: `code: message`. */
export function errorOf(name: string, ...args: unknown[]): string {
  const def = builtinTable.get(name);
  if (!def) throw new Error(`unknown builtin ${name}`);
  try {
    const r = def.impl(args.map(v), ctx());
    return `no error: ${JSON.stringify(r === undefined ? undefined : toJSON(r))}`;
  } catch (e) {
    if (e instanceof BuiltinError) return `${e.code}: ${e.message}`;
    throw e;
  }
}

/** Compiles `package p\nr := <expr>` to Wasm and evaluates `p/r` through the SDK. */
export async function evalRego(body: string, input?: unknown): Promise<unknown> {
  const built = buildPolicy([{ file: "p.rego", source: `package p\n${body}` }], { entrypoints: ["p/r"] });
  if (!built.wasm) throw new Error(JSON.stringify(built.errors));
  const policy = await loadCompiledPolicy({ wasm: built.wasm });
  const rs = policy.evaluate(input, "p/r");
  const first = rs[0];
  return first !== null && typeof first === "object" && "result" in first ? first.result : undefined;
}
