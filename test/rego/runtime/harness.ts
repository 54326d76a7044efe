/**
 * Test harness: the raw runtime.wasm instantiated directly (its `writ_*` exports are available, the
 * `writ.*` placeholder imports are stubs), with helpers to move values in and out as text.
 */
import { loadRuntimeBytes } from "../../../src/rego/runtime/index.ts";
import { Wasm, type WasmInstance, type WasmMemory } from "../../../src/rego/wasm/host.ts";
import { refillFuel } from "../../../src/rego/wasm/meter.ts";

export class RuntimeAbort extends Error {}

export class RawRuntime {
  readonly instance: WasmInstance;
  readonly memory: WasmMemory;
  /** Lines passed to env.opa_println. */
  readonly printed: string[] = [];

  constructor(bytes: Uint8Array = loadRuntimeBytes(), pages = 5) {
    this.memory = new Wasm.Memory({ initial: pages });
    const stub = (): number => 0;
    this.instance = new Wasm.Instance(new Wasm.Module(bytes), {
      env: {
        memory: this.memory,
        opa_abort: (addr: number): never => {
          throw new RuntimeAbort(this.cstring(addr));
        },
        opa_println: (addr: number): void => {
          this.printed.push(this.cstring(addr));
        },
        opa_builtin0: stub,
        opa_builtin1: stub,
        opa_builtin2: stub,
        opa_builtin3: stub,
        opa_builtin4: stub,
      },
      writ: {
        eval_ctx: stub,
        entrypoints: stub,
        builtins: stub,
        // The runtime's loops are metered; here with no budget.
        fuel_out: refillFuel(() => this.instance),
      },
    });
  }

  /** Calls an export with numbers (i32/f64) or bigints (i64); returns what it returns. */
  raw(name: string, ...args: (number | bigint)[]): unknown {
    const fn: unknown = this.instance.exports[name];
    if (typeof fn !== "function") throw new Error(`no export ${name}`);
    return Reflect.apply(fn, undefined, args);
  }

  /** Calls an export returning an i32 (or nothing: 0). */
  call(name: string, ...args: (number | bigint)[]): number {
    const r = this.raw(name, ...args);
    if (r === undefined) return 0;
    if (typeof r !== "number") throw new Error(`${name} returned ${typeof r}`);
    return r;
  }

  bytes(): Uint8Array {
    return new Uint8Array(this.memory.buffer);
  }

  cstring(addr: number): string {
    const b = this.bytes();
    let end = addr;
    while (b[end] !== 0) end++;
    return new TextDecoder().decode(b.subarray(addr, end));
  }

  /** Copies bytes onto the heap; returns their address. */
  write(data: Uint8Array | string): { ptr: number; len: number } {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    const ptr = this.call("opa_malloc", bytes.length);
    this.bytes().set(bytes, ptr);
    return { ptr, len: bytes.length };
  }

  /** Parses JSON (or Rego value text); 0 when invalid. */
  parse(text: string | Uint8Array, syntax: "json" | "value" = "json"): number {
    const { ptr, len } = this.write(text);
    return this.call(syntax === "json" ? "opa_json_parse" : "opa_value_parse", ptr, len);
  }

  /** Parses and insists on success. */
  v(text: string, syntax: "json" | "value" = "value"): number {
    const addr = this.parse(text, syntax);
    if (addr === 0) throw new Error(`does not parse: ${text}`);
    return addr;
  }

  json(v: number): string {
    return this.cstring(this.call("opa_json_dump", v));
  }

  value(v: number): string {
    return this.cstring(this.call("opa_value_dump", v));
  }

  str(s: string): number {
    const { ptr, len } = this.write(s);
    return this.call("writ_string_copy", ptr, len);
  }

  heap(): number {
    return this.call("opa_heap_ptr_get");
  }

  u8(addr: number): number {
    return this.bytes()[addr] ?? 0;
  }

  u32(addr: number): number {
    return new DataView(this.memory.buffer).getUint32(addr, true);
  }

  i32(addr: number): number {
    return new DataView(this.memory.buffer).getInt32(addr, true);
  }
}
