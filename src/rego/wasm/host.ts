/**
 * A typed view of the JavaScript WebAssembly API. The project's TypeScript configuration has no DOM
 * library, so the global `WebAssembly` namespace is not typed; this module describes the small part
 * of it that the compiler and its tests use.
 */

export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(deltaPages: number): number;
}

export interface WasmImportDescriptor {
  readonly module: string;
  readonly name: string;
  readonly kind: string;
}

export interface WasmExportDescriptor {
  readonly name: string;
  readonly kind: string;
}

/** A compiled module (opaque). */
export interface WasmModule {
  readonly __wasmModule?: never;
}

export interface WasmInstance {
  readonly exports: Readonly<Record<string, unknown>>;
}

export type WasmImports = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

export interface WasmApi {
  readonly Memory: new (descriptor: { initial: number; maximum?: number }) => WasmMemory;
  readonly Module: {
    new (bytes: Uint8Array): WasmModule;
    imports(module: WasmModule): WasmImportDescriptor[];
    exports(module: WasmModule): WasmExportDescriptor[];
  };
  readonly Instance: new (module: WasmModule, imports: WasmImports) => WasmInstance;
}

function loadWasmApi(): WasmApi {
  const api: unknown = Reflect.get(globalThis, "WebAssembly");
  if (typeof api !== "object" || api === null) throw new Error("WebAssembly is not available");
  for (const name of ["Memory", "Module", "Instance"]) {
    if (typeof Reflect.get(api, name) !== "function") throw new Error(`WebAssembly.${name} is not available`);
  }
  // The checks above establish the shape this module relies on.
  return Reflect.get(globalThis, "WebAssembly");
}

export const Wasm: WasmApi = loadWasmApi();

/** Export `name` of an instance as a function taking and returning numbers (i32/f64 ABI values). */
export function exportedFunction(instance: WasmInstance, name: string): (...args: number[]) => number {
  const fn: unknown = instance.exports[name];
  if (typeof fn !== "function") throw new Error(`missing export ${name}`);
  return (...args: number[]): number => {
    const result: unknown = Reflect.apply(fn, undefined, args);
    if (result === undefined) return 0;
    if (typeof result !== "number") throw new Error(`export ${name} returned ${typeof result}`);
    return result;
  };
}

/** Value of exported global `name` (an i32). */
export function exportedGlobal(instance: WasmInstance, name: string): number {
  const g: unknown = instance.exports[name];
  const value: unknown = typeof g === "object" && g !== null ? Reflect.get(g, "value") : undefined;
  if (typeof value !== "number") throw new Error(`missing global export ${name}`);
  return value;
}

/** Sets exported mutable global `name` (an i32) to `value`. */
export function setExportedGlobal(instance: WasmInstance, name: string, value: number): void {
  const g: unknown = instance.exports[name];
  if (typeof g !== "object" || g === null || !Reflect.set(g, "value", value))
    throw new Error(`missing mutable global export ${name}`);
}
