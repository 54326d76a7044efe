/**
 * Writ's Wasm runtime library: the value model, JSON, heap and OPA ABI functions that compiled
 * policies are linked against (see README.md in this folder for the contract).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const RUNTIME_URL = new URL("./runtime.wasm", import.meta.url);

let cached: Uint8Array | undefined;

/** The committed runtime.wasm (read once; callers get a fresh copy they may modify). */
export function loadRuntimeBytes(): Uint8Array {
  cached ??= new Uint8Array(readFileSync(fileURLToPath(RUNTIME_URL)));
  return cached.slice();
}

/** Type tags (byte 0 of every value); also OPA's sort order between types. */
export const ValueType = {
  null: 1,
  boolean: 2,
  number: 3,
  string: 4,
  array: 5,
  object: 6,
  set: 7,
} as const;

/** Number representations (byte 1 of a number value). */
export const NumberKind = { int: 0, float: 1, ref: 2 } as const;

/** Evaluation context field offsets (bytes). */
export const EvalContext = { size: 16, input: 0, data: 4, result: 8, entrypoint: 12 } as const;

/** Error codes returned by opa_value_add_path / opa_value_remove_path. */
export const PathError = { ok: 0, internal: 1, invalidType: 2, invalidPath: 3 } as const;

/** ABI version implemented by the runtime (exported globals opa_wasm_abi_version / _minor_version). */
export const ABI_VERSION = { major: 1, minor: 3 } as const;
