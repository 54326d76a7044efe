/**
 * The linker: turns runtime.wasm plus generated code into a policy module that follows OPA's Wasm ABI.
 *
 * A code generator:
 *  1. creates a Linker (which reads runtime.wasm into a binaryen module),
 *  2. adds its functions to `linker.module`, calling runtime functions through `linker.symbols`
 *     (binaryen internal names; or `linker.call(name, operands)`),
 *  3. places constants in static memory (`addData`, `addUtf8`, `constValue`, `constString`, ...),
 *  4. declares entrypoints (`defineEntrypoints`) and host builtins (`defineBuiltins`),
 *  5. calls `emit()` to get the final module bytes.
 *
 * The final module imports only what the OPA SDK supplies (env.memory, env.opa_abort, env.opa_println,
 * env.opa_builtin0..4) and exports only the ABI. The runtime's private `writ.*` imports are replaced by
 * generated functions; see src/rego/runtime/README.md for the contract.
 */
import binaryen from "binaryen";
import { loadRuntimeBytes } from "../runtime/index.ts";
import { exportedFunction, Wasm, type WasmInstance, type WasmMemory } from "./host.ts";
import { FUEL_GLOBAL_EXPORT, FUEL_OUT_IMPORT, FUEL_PER_CHECK, meteredBody, refillFuel } from "./meter.ts";

/** Runtime functions generated code may call (Wasm exports of runtime.wasm). */
export const RUNTIME_FUNCTIONS = [
  // OPA ABI
  "opa_malloc",
  "opa_free",
  "opa_json_parse",
  "opa_value_parse",
  "opa_json_dump",
  "opa_value_dump",
  "opa_heap_ptr_get",
  "opa_heap_ptr_set",
  "opa_eval_ctx_new",
  "opa_eval_ctx_set_input",
  "opa_eval_ctx_set_data",
  "opa_eval_ctx_set_entrypoint",
  "opa_eval_ctx_get_result",
  "opa_value_add_path",
  "opa_value_remove_path",
  // Errors and host calls
  "writ_abort_bytes",
  "writ_error_at",
  "writ_println",
  "writ_print",
  "writ_call_builtin0",
  "writ_call_builtin1",
  "writ_call_builtin2",
  "writ_call_builtin3",
  "writ_call_builtin4",
  // Evaluation context and results
  "writ_ctx_input",
  "writ_ctx_data",
  "writ_ctx_entrypoint",
  "writ_result_add",
  "writ_result_add_bindings",
  "writ_result_key",
  // Constructors
  "writ_null",
  "writ_boolean",
  "writ_number_int",
  "writ_number_float",
  "writ_number_ref",
  "writ_number_from_decimal",
  "writ_string",
  "writ_string_copy",
  "writ_array",
  "writ_array_append",
  "writ_array_set",
  "writ_object",
  "writ_object_with_cap",
  "writ_object_insert",
  "writ_object_insert_once",
  "writ_object_remove",
  "writ_object_insert_path",
  "writ_object_set_add_path",
  "writ_upsert",
  "writ_array_appended",
  "writ_set",
  "writ_set_with_cap",
  "writ_set_add",
  "writ_set_remove",
  // Access
  "writ_type",
  "writ_length",
  "writ_value_get",
  "writ_object_get",
  "writ_set_get",
  "writ_array_get",
  "writ_key_at",
  "writ_value_at",
  "writ_compare",
  "writ_equal",
  "writ_truthy",
  "writ_is_true",
  // Copies, merge, serialization
  "writ_value_shallow_copy",
  "writ_value_deep_copy",
  "writ_object_merge",
  "writ_to_json_string",
  "writ_parse_string",
  // Numbers
  "writ_number_kind",
  "writ_number_is_int",
  "writ_number_to_i64",
  "writ_number_to_f64",
  "writ_number_decimal",
  "writ_decimal_compare",
] as const;

/** Host functions imported from `env` (the SDK supplies them). */
export const HOST_IMPORTS = [
  "opa_abort",
  "opa_println",
  "opa_builtin0",
  "opa_builtin1",
  "opa_builtin2",
  "opa_builtin3",
  "opa_builtin4",
] as const;

export type RuntimeFunctionName = (typeof RUNTIME_FUNCTIONS)[number];
export type HostImportName = (typeof HOST_IMPORTS)[number];
export type RuntimeSymbolName = RuntimeFunctionName | HostImportName;

/** Binaryen internal function name of every runtime function and host import. */
export type RuntimeSymbols = Readonly<Record<RuntimeSymbolName, string>>;

/** Function exports of the final module (OPA ABI 1.3). */
export const ABI_FUNCTION_EXPORTS: readonly string[] = [
  "opa_malloc",
  "opa_free",
  "opa_json_parse",
  "opa_value_parse",
  "opa_json_dump",
  "opa_value_dump",
  "opa_heap_ptr_get",
  "opa_heap_ptr_set",
  "builtins",
  "entrypoints",
  "opa_eval",
  "eval",
  "opa_eval_ctx_new",
  "opa_eval_ctx_set_input",
  "opa_eval_ctx_set_data",
  "opa_eval_ctx_set_entrypoint",
  "opa_eval_ctx_get_result",
  "opa_value_add_path",
  "opa_value_remove_path",
  "opa_value_free",
  "opa_heap_blocks_stash",
  "opa_heap_blocks_restore",
  "opa_heap_stash_clear",
];

/** Global exports of the final module. */
export const ABI_GLOBAL_EXPORTS: readonly string[] = ["opa_wasm_abi_version", "opa_wasm_abi_minor_version"];

/** Wasm features the runtime uses; generated code may use the same. */
export const FEATURES: binaryen.Features =
  binaryen.Features.MutableGlobals |
  binaryen.Features.NontrappingFPToInt |
  binaryen.Features.SignExt |
  binaryen.Features.BulkMemory |
  binaryen.Features.BulkMemoryOpt;

/** Pages the SDK's memory has by default (`{initial: 5}`); the module may not ask for more. */
export const SDK_INITIAL_PAGES = 5;

const PAGE = 65536;

/** Name of the linker's data segment (passive when it outgrows the host's initial memory). */
const STATIC_SEGMENT = "writ_static";

/** An entrypoint: its name (e.g. "example/allow") and the generated function `(ctx: i32) -> ()`. */
export interface EntrypointDefinition {
  readonly name: string;
  readonly func: string;
}

export interface EmitOptions {
  /** Run binaryen's optimizer over the linked module (default true). */
  readonly optimize?: boolean;
  /** Largest initial memory (pages) the module may declare (default 5, what the SDK provides). */
  readonly maxInitialPages?: number;
}

interface DataSegment {
  readonly offset: number;
  readonly data: Uint8Array;
}

const encoder = new TextEncoder();

function alignUp(n: number, align: number): number {
  return Math.ceil(n / align) * align;
}

/**
 * binaryen.js has getNumDataSegments/getDataSegmentInfo, but its type declarations name them
 * differently (getNumMemorySegments/getMemorySegmentInfo); call and check them defensively.
 */
function dataSegments(module: binaryen.Module): DataSegment[] {
  const getInfo: unknown = Reflect.get(module, "getDataSegmentInfo");
  const getCount: unknown = Reflect.get(module, "getNumDataSegments");
  if (typeof getInfo !== "function" || typeof getCount !== "function") {
    throw new Error("binaryen lacks Module#getDataSegmentInfo/getNumDataSegments");
  }
  const count: unknown = Reflect.apply(getCount, module, []);
  if (typeof count !== "number") throw new Error("unreadable data segment count");
  const segments: DataSegment[] = [];
  for (let i = 0; i < count; i++) {
    const info: unknown = Reflect.apply(getInfo, module, [module.getDataSegmentByIndex(i)]);
    if (typeof info !== "object" || info === null) throw new Error("unreadable data segment");
    const offset: unknown = Reflect.get(info, "offset");
    const data: unknown = Reflect.get(info, "data");
    const passive: unknown = Reflect.get(info, "passive");
    if (passive === true) throw new Error("runtime has a passive data segment");
    if (typeof offset !== "number" || !(data instanceof ArrayBuffer))
      throw new Error("unreadable data segment");
    segments.push({ offset, data: new Uint8Array(data.slice(0)) });
  }
  return segments;
}

function constInitValue(expr: binaryen.ExpressionRef): number {
  const info = binaryen.getExpressionInfo(expr);
  const value: unknown = Reflect.get(info, "value");
  if (info.id !== binaryen.ConstId || typeof value !== "number")
    throw new Error("expected an i32.const initializer");
  return value;
}

export class Linker {
  /** Functions that came with the runtime; later ones were generated. */
  private readonly runtimeFunctionCount: number;
  /** The module being linked; generated functions are added here. */
  readonly module: binaryen.Module;
  /** Internal names of runtime functions and host imports. */
  readonly symbols: RuntimeSymbols;
  /** Internal name of the (imported) linear memory, for loads and stores. */
  readonly memoryName: string;
  /** End of the runtime's own static data: constants added by the linker start here. */
  readonly staticBase: number;

  private readonly runtimeBytes: Uint8Array;
  /** Every function the runtime exports, by export name -> internal name. */
  private readonly runtimeFunctions = new Map<string, string>();
  private readonly runtimeSegments: DataSegment[];
  private readonly heapGlobal: string;
  private readonly placeholders: { evalCtx: string; entrypoints: string; builtins: string; fuelOut: string };
  /** The runtime's fuel global (`meter.ts`): every loop spends it. */
  private readonly fuelGlobal: string;
  private staticBytes = new Uint8Array(1024);
  private staticEnd: number;
  private readonly constants = new Map<string, number>();
  private snapshot: { instance: WasmInstance; memory: WasmMemory } | undefined;
  private entrypointsDefined = false;
  private builtinsDefined = false;
  private fuelOutDefined = false;
  private emitted = false;

  constructor(runtimeBytes: Uint8Array = loadRuntimeBytes()) {
    this.runtimeBytes = runtimeBytes;
    this.module = binaryen.readBinary(runtimeBytes);
    this.runtimeFunctionCount = this.module.getNumFunctions();
    this.module.setFeatures(FEATURES);

    const exports = new Map<string, binaryen.ExportInfo>();
    for (let i = 0; i < this.module.getNumExports(); i++) {
      const info = binaryen.getExportInfo(this.module.getExportByIndex(i));
      exports.set(info.name, info);
      if (info.kind === binaryen.ExternalFunction) this.runtimeFunctions.set(info.name, info.value);
    }
    const imports = new Map<string, string>();
    for (let i = 0; i < this.module.getNumFunctions(); i++) {
      const info = binaryen.getFunctionInfo(this.module.getFunctionByIndex(i));
      if (info.module) imports.set(`${info.module}.${info.base}`, info.name);
    }
    const exportedFunctionName = (name: string): string => {
      const info = exports.get(name);
      if (!info || info.kind !== binaryen.ExternalFunction)
        throw new Error(`runtime lacks function export ${name}`);
      return info.value;
    };
    const importedFunctionName = (key: string): string => {
      const name = imports.get(key);
      if (!name) throw new Error(`runtime lacks import ${key}`);
      return name;
    };

    const hostImports = new Set<string>(HOST_IMPORTS);
    this.symbols = buildSymbols((name) =>
      hostImports.has(name) ? importedFunctionName(`env.${name}`) : exportedFunctionName(name),
    );
    this.placeholders = {
      evalCtx: importedFunctionName("writ.eval_ctx"),
      entrypoints: importedFunctionName("writ.entrypoints"),
      builtins: importedFunctionName("writ.builtins"),
      fuelOut: importedFunctionName(`${FUEL_OUT_IMPORT.module}.${FUEL_OUT_IMPORT.base}`),
    };
    const fuel = exports.get(FUEL_GLOBAL_EXPORT);
    if (!fuel || fuel.kind !== binaryen.ExternalGlobal)
      throw new Error(`runtime lacks global export ${FUEL_GLOBAL_EXPORT}`);
    this.fuelGlobal = fuel.value;

    const heap = exports.get("writ_heap_ptr");
    if (!heap || heap.kind !== binaryen.ExternalGlobal)
      throw new Error("runtime lacks global export writ_heap_ptr");
    this.heapGlobal = heap.value;
    this.staticBase = constInitValue(binaryen.getGlobalInfo(this.module.getGlobal(heap.value)).init);
    this.staticEnd = this.staticBase;

    const memory = exports.get("memory");
    if (!memory || memory.kind !== binaryen.ExternalMemory) throw new Error("runtime lacks memory export");
    this.memoryName = memory.value;
    this.runtimeSegments = dataSegments(this.module);
    for (const s of this.runtimeSegments) {
      if (s.offset + s.data.length > this.staticBase) throw new Error("runtime data overlaps its heap");
    }
  }

  /** A call to a runtime function or host import (result type taken from its signature). */
  call(name: RuntimeSymbolName, operands: readonly binaryen.ExpressionRef[]): binaryen.ExpressionRef {
    const internal = this.symbols[name];
    const info = binaryen.getFunctionInfo(this.module.getFunction(internal));
    return this.module.call(internal, operands, info.results);
  }

  /** Whether the runtime exports a function with this name (e.g. a native builtin). */
  hasRuntimeFunction(name: string): boolean {
    return this.runtimeFunctions.has(name);
  }

  /**
   * The runtime function implementing Rego builtin `name` natively, if any: by convention the export
   * `writ_builtin_<name>` with dots replaced by underscores (e.g. `object.get` ->
   * `writ_builtin_object_get`), taking the arguments as values and returning a value (0 = undefined).
   */
  nativeBuiltin(name: string): string | undefined {
    const exportName = `writ_builtin_${name.replaceAll(".", "_")}`;
    return this.runtimeFunctions.has(exportName) ? exportName : undefined;
  }

  /** A call to any function the runtime exports, by export name (for names not in RuntimeSymbols). */
  callDynamic(name: string, operands: readonly binaryen.ExpressionRef[]): binaryen.ExpressionRef {
    const internal = this.runtimeFunctions.get(name);
    if (internal === undefined) throw new Error(`runtime has no function ${name}`);
    const info = binaryen.getFunctionInfo(this.module.getFunction(internal));
    return this.module.call(internal, operands, info.results);
  }

  /** Current end of static data (the heap starts at the next 8-byte boundary). */
  get dataEnd(): number {
    return this.staticEnd;
  }

  /** Places raw bytes in static memory; returns their address. */
  addData(bytes: Uint8Array, align = 1): number {
    this.assertOpen();
    const addr = alignUp(this.staticEnd, align);
    this.reserveStatic(addr + bytes.length);
    this.staticBytes.set(bytes, addr - this.staticBase);
    this.staticEnd = addr + bytes.length;
    return addr;
  }

  /** Places the UTF-8 encoding of `text` in static memory (deduplicated); returns address and length. */
  addUtf8(text: string): { ptr: number; len: number } {
    const bytes = encoder.encode(text);
    const key = `utf8:${text}`;
    const known = this.constants.get(key);
    if (known !== undefined) return { ptr: known, len: bytes.length };
    const ptr = this.addData(bytes);
    this.constants.set(key, ptr);
    return { ptr, len: bytes.length };
  }

  /**
   * A constant value laid out in static memory from its JSON text (or Rego value text with
   * `syntax: "value"`, which allows sets). Returns the value's address. Deduplicated by text.
   * Constants are shared and must never be mutated (no insert/append/add on them).
   */
  constValue(text: string, syntax: "json" | "value" = "json"): number {
    this.assertOpen();
    const key = `${syntax}:${text}`;
    const known = this.constants.get(key);
    if (known !== undefined) return known;
    const addr = this.layOut(encoder.encode(text), syntax);
    this.constants.set(key, addr);
    return addr;
  }

  /** A constant string value. */
  constString(s: string): number {
    return this.constValue(JSON.stringify(s));
  }

  /** A constant number value from JSON number text (ints, exact decimals, big integers). */
  constNumber(text: string): number {
    if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text))
      throw new Error(`invalid number literal ${text}`);
    return this.constValue(text);
  }

  /**
   * Defines the entrypoints: `entrypoints()` returns `{name: index}` and `eval`/`opa_eval` dispatch on the
   * context's entrypoint id to `entries[id].func` (signature `(ctx: i32) -> ()`), aborting with
   * "invalid entrypoint id" for unknown ids.
   */
  defineEntrypoints(entries: readonly EntrypointDefinition[]): void {
    this.assertOpen();
    if (this.entrypointsDefined) throw new Error("entrypoints already defined");
    const names = new Set<string>();
    for (const e of entries) {
      if (names.has(e.name)) throw new Error(`duplicate entrypoint ${e.name}`);
      names.add(e.name);
    }
    const m = this.module;
    const mapping: Record<string, number> = {};
    entries.forEach((e, i) => {
      mapping[e.name] = i;
    });
    this.replacePlaceholder(
      this.placeholders.entrypoints,
      binaryen.none,
      binaryen.i32,
      [],
      m.i32.const(this.constValue(JSON.stringify(mapping))),
    );

    const ctx = (): binaryen.ExpressionRef => m.local.get(0, binaryen.i32);
    const message = this.addUtf8("invalid entrypoint id");
    const invalid = m.block(null, [
      this.call("writ_abort_bytes", [m.i32.const(message.ptr), m.i32.const(message.len)]),
      m.unreachable(),
    ]);
    const labels = entries.map((_, i) => `writ_entry_${i}`);
    let body: binaryen.ExpressionRef = m.switch(
      labels,
      "writ_entry_invalid",
      m.i32.load(12, 4, ctx(), this.memoryName),
    );
    entries.forEach((e, i) => {
      body = m.block(null, [
        m.block(labels[i] ?? "", [body]),
        m.call(e.func, [ctx()], binaryen.none),
        m.return(),
      ]);
    });
    body = m.block(null, [m.block("writ_entry_invalid", [body]), invalid]);
    this.replacePlaceholder(this.placeholders.evalCtx, binaryen.i32, binaryen.none, [], body);
    this.entrypointsDefined = true;
  }

  /** Defines `builtins()`: the host builtins the policy calls through opa_builtinN, by name -> id. */
  defineBuiltins(builtins: Readonly<Record<string, number>>): void {
    this.assertOpen();
    if (this.builtinsDefined) throw new Error("builtins already defined");
    const addr = this.constValue(JSON.stringify(builtins));
    this.replacePlaceholder(
      this.placeholders.builtins,
      binaryen.none,
      binaryen.i32,
      [],
      this.module.i32.const(addr),
    );
    this.builtinsDefined = true;
  }

  /** A generated loop's body, spending the module's fuel as the runtime's loops do (`meter.ts`). */
  meteredLoopBody(body: binaryen.ExpressionRef): binaryen.ExpressionRef {
    return meteredBody(this.module, this.fuelGlobal, this.placeholders.fuelOut, body);
  }

  /**
   * Defines what the module does when its fuel runs out: refill it and, given the id of the
   * budget host builtin (`BUDGET_BUILTIN`), call it, so the host may stop the evaluation past its
   * deadline. Without it (a module for hosts that do not implement it) the fuel is only refilled.
   */
  defineFuelOut(budgetBuiltinId?: number): void {
    this.assertOpen();
    if (this.fuelOutDefined) throw new Error("fuel out already defined");
    const m = this.module;
    const refill = m.global.set(this.fuelGlobal, m.i32.const(FUEL_PER_CHECK));
    const body =
      budgetBuiltinId === undefined
        ? refill
        : m.block(null, [
            refill,
            m.drop(this.call("writ_call_builtin0", [m.i32.const(budgetBuiltinId), m.i32.const(0)])),
          ]);
    this.replacePlaceholder(this.placeholders.fuelOut, binaryen.none, binaryen.none, [], body);
    this.fuelOutDefined = true;
  }

  /** Finishes the module and returns its bytes. The linker cannot be used afterwards. */
  emit(options: EmitOptions = {}): Uint8Array {
    this.assertOpen();
    if (!this.entrypointsDefined) throw new Error("no entrypoints defined");
    if (!this.builtinsDefined) this.defineBuiltins({});
    if (!this.fuelOutDefined) this.defineFuelOut();
    const m = this.module;
    const heapStart = alignUp(this.staticEnd, 8);
    const pages = Math.max(1, Math.ceil(heapStart / PAGE));
    const maxPages = options.maxInitialPages ?? SDK_INITIAL_PAGES;
    // The host creates the memory (the SDK: `{initial: 5}`), and a module asking for more
    // initial pages than it has does not link. Static data beyond that is copied in by the
    // module itself when it is instantiated: its start function grows the memory, as the
    // runtime's heap does, and copies a passive segment (bulk memory's memory.init).
    const grows = pages > maxPages;

    // Keep only the ABI exports.
    const keep = new Set([...ABI_FUNCTION_EXPORTS, ...ABI_GLOBAL_EXPORTS, "memory"]);
    const drop: string[] = [];
    for (let i = 0; i < m.getNumExports(); i++) {
      const info = binaryen.getExportInfo(m.getExportByIndex(i));
      if (!keep.has(info.name)) drop.push(info.name);
    }
    for (const name of drop) m.removeExport(name);

    // Move the heap past the static data.
    m.removeGlobal(this.heapGlobal);
    m.addGlobal(this.heapGlobal, binaryen.i32, true, m.i32.const(heapStart));

    // Runtime segments plus one segment of linker data, in the imported memory, without a maximum.
    const segments: binaryen.MemorySegment[] = this.runtimeSegments.map((s) => ({
      offset: m.i32.const(s.offset),
      data: s.data,
      passive: false,
    }));
    const staticData = this.staticBytes.slice(0, this.staticEnd - this.staticBase);
    if (staticData.length > 0) {
      // binaryen.js reads a segment's `name` (memory.init refers to it); its typings omit it.
      const segment: binaryen.MemorySegment & { name: string } = {
        name: STATIC_SEGMENT,
        // A passive segment has no offset (a null expression); memory.init places it.
        offset: grows ? 0 : m.i32.const(this.staticBase),
        data: staticData,
        passive: grows,
      };
      segments.push(segment);
    }
    m.setMemory(grows ? maxPages : pages, -1, null, segments, false, false, this.memoryName);
    m.addMemoryImport(this.memoryName, "env", "memory");
    if (grows) this.addStaticDataStart(pages, staticData.length);

    if (!m.validate()) throw new Error("linked module does not validate");
    if (options.optimize ?? true) {
      // The runtime was optimized when it was built: optimize only the generated functions,
      // then drop whatever of the runtime the policy does not use. (Optimizing the whole module
      // again costs ~20x the rest of a build and gains almost nothing.)
      const level = binaryen.getOptimizeLevel();
      const shrink = binaryen.getShrinkLevel();
      binaryen.setOptimizeLevel(2);
      binaryen.setShrinkLevel(1);
      try {
        for (let i = this.runtimeFunctionCount; i < m.getNumFunctions(); i++) {
          m.optimizeFunction(m.getFunctionByIndex(i));
        }
        m.runPasses(["remove-unused-module-elements"]);
      } finally {
        binaryen.setOptimizeLevel(level);
        binaryen.setShrinkLevel(shrink);
      }
    }
    const bytes = m.emitBinary();
    this.dispose();
    return bytes;
  }

  /**
   * The start function of a module whose static data outgrows the host's initial memory: grow
   * the memory to `pages` (a trap if the host refuses), copy the passive static segment to its
   * place and drop it.
   */
  private addStaticDataStart(pages: number, length: number): void {
    const m = this.module;
    const size = () => m.memory.size(this.memoryName);
    const body = m.block(null, [
      m.if(
        m.i32.lt_u(size(), m.i32.const(pages)),
        m.if(
          m.i32.eq(m.memory.grow(m.i32.sub(m.i32.const(pages), size()), this.memoryName), m.i32.const(-1)),
          m.unreachable(),
        ),
      ),
      m.memory.init(
        STATIC_SEGMENT,
        m.i32.const(this.staticBase),
        m.i32.const(0),
        m.i32.const(length),
        this.memoryName,
      ),
      m.data.drop(STATIC_SEGMENT),
    ]);
    const start = m.addFunction("writ_static_data", binaryen.none, binaryen.none, [], body);
    m.setStart(start);
  }

  /** Releases the binaryen module (emit does this itself). */
  dispose(): void {
    if (this.emitted) return;
    this.emitted = true;
    this.module.dispose();
  }

  private assertOpen(): void {
    if (this.emitted) throw new Error("linker already emitted or disposed");
  }

  private replacePlaceholder(
    name: string,
    params: binaryen.Type,
    results: binaryen.Type,
    vars: binaryen.Type[],
    body: binaryen.ExpressionRef,
  ): void {
    this.module.removeFunction(name);
    this.module.addFunction(name, params, results, vars, body);
  }

  private reserveStatic(end: number): void {
    const need = end - this.staticBase;
    if (need <= this.staticBytes.length) return;
    const grown = new Uint8Array(Math.max(need, this.staticBytes.length * 2));
    grown.set(this.staticBytes);
    this.staticBytes = grown;
  }

  /**
   * Lays out a constant by running the runtime's own parser in a private instance whose heap starts at
   * the current end of static data, then copying the bytes it wrote: the addresses inside are final.
   */
  private layOut(text: Uint8Array, syntax: "json" | "value"): number {
    const { instance, memory } = this.snapshotInstance();
    const start = alignUp(this.staticEnd, 8);
    exportedFunction(instance, "opa_heap_ptr_set")(start);
    const p = exportedFunction(instance, "opa_malloc")(text.length);
    new Uint8Array(memory.buffer).set(text, p);
    const parse = syntax === "json" ? "opa_json_parse" : "opa_value_parse";
    const addr = exportedFunction(instance, parse)(p, text.length);
    if (addr === 0) throw new Error(`invalid constant ${new TextDecoder().decode(text)}`);
    const end = alignUp(exportedFunction(instance, "opa_heap_ptr_get")(), 8);
    this.reserveStatic(end);
    this.staticBytes.set(new Uint8Array(memory.buffer, start, end - start), start - this.staticBase);
    this.staticEnd = end;
    return addr;
  }

  private snapshotInstance(): { instance: WasmInstance; memory: WasmMemory } {
    if (this.snapshot) return this.snapshot;
    const memory = new Wasm.Memory({ initial: SDK_INITIAL_PAGES });
    const decode = (addr: number): string => {
      const bytes = new Uint8Array(memory.buffer);
      let end = addr;
      while (bytes[end] !== 0) end++;
      return new TextDecoder().decode(bytes.subarray(addr, end));
    };
    const unexpected = (): never => {
      throw new Error("runtime import called while laying out a constant");
    };
    let created: WasmInstance | undefined;
    const instance = new Wasm.Instance(new Wasm.Module(this.runtimeBytes), {
      env: {
        memory,
        opa_abort: (addr: number): never => {
          throw new Error(`runtime abort while laying out a constant: ${decode(addr)}`);
        },
        opa_println: unexpected,
        opa_builtin0: unexpected,
        opa_builtin1: unexpected,
        opa_builtin2: unexpected,
        opa_builtin3: unexpected,
        opa_builtin4: unexpected,
      },
      writ: {
        eval_ctx: unexpected,
        entrypoints: unexpected,
        builtins: unexpected,
        fuel_out: refillFuel(() => created),
      },
    });
    created = instance;
    this.snapshot = { instance, memory };
    return this.snapshot;
  }
}

function buildSymbols(lookup: (name: RuntimeSymbolName) => string): RuntimeSymbols {
  const entries = [...RUNTIME_FUNCTIONS, ...HOST_IMPORTS].map((name) => [name, lookup(name)] as const);
  // Every key of RuntimeSymbols is present: the entries enumerate exactly RuntimeSymbolName.
  return Object.fromEntries(entries) as RuntimeSymbols;
}
