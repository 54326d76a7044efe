import { buildPolicy } from "../../../src/rego/build.ts";
import { BuiltinError, builtinTable, callBuiltin, systemContext } from "../../../src/rego/builtins/index.ts";
import { formatValue, parseJSON, type Value } from "../../../src/rego/plan/value.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";

export const ctx = () => systemContext(() => 1_700_000_000_000_000_000n);

/** The builtin's result in Rego text, or undefined. */
export function call(name: string, ...args: Value[]): string | undefined {
  const r = callBuiltin(name, args, ctx());
  return r === undefined ? undefined : formatValue(r);
}

/** The error a builtin raises (`code: message`), or "no error". */
export function errorOf(name: string, ...args: Value[]): string {
  try {
    builtinTable.get(name)!.impl(args, ctx());
    return "no error";
  } catch (e) {
    if (e instanceof BuiltinError) return `${e.code}: ${e.message}`;
    throw e;
  }
}

export const j = (text: string): Value => parseJSON(text);

/** Compiles a module with rule `p` in package `t` and evaluates `data.t.p`. */
export async function evalRule(source: string): Promise<unknown> {
  const built = buildPolicy([{ file: "t.rego", source }], {
    queries: [{ name: "q", query: "x = data.t.p" }],
  });
  if (!built.wasm) throw new Error(built.errors.map((e) => e.message).join("\n"));
  const policy = await loadCompiledPolicy({ wasm: built.wasm, hostBuiltins: built.hostBuiltins });
  return policy.evaluate({}, "q");
}
