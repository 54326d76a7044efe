/**
 * Builds the Wasm runtime (src/rego/runtime/assembly/*.ts, low-level AssemblyScript) into
 * src/rego/runtime/runtime.wasm with asc's programmatic API. The build is deterministic: no debug
 * information, no paths, fixed options. Run with `npx tsx src/rego/runtime/build.ts`
 * (`--check` compares with the committed binary instead of writing it).
 *
 * Two passes: the first one measures where the runtime's static data ends (`__heap_base`, read by a
 * probe export that only exists in that pass), the second one compiles the heap pointer's initial
 * value as that constant (`--use HEAP_BASE=`), so the module needs no start function and the linker
 * can move the heap by rewriting one global initializer.
 */
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import binaryen from "binaryen";
import { exportedFunction, Wasm, type WasmImports } from "../wasm/host.ts";
import { FEATURES } from "../wasm/link.ts";
import { FUEL_GLOBAL_EXPORT, FUEL_OUT_IMPORT, FUEL_PER_CHECK, meterLoops } from "../wasm/meter.ts";

const here = dirname(fileURLToPath(import.meta.url));
export const ASSEMBLY_DIR = join(here, "assembly");
export const RUNTIME_WASM_PATH = join(here, "runtime.wasm");

const PROBE_FILE = "__heap_base_probe.ts";
const PROBE_SOURCE = "export function __writ_heap_base_probe(): usize { return __heap_base; }\n";
const PROBE_EXPORT = "__writ_heap_base_probe";

// asc is loaded through a non-literal specifier so that its type declarations (which declare
// AssemblyScript's own `console`, `WebAssembly`, ... globals) stay out of the TypeScript program.
const ASC_MODULE: string = "assemblyscript/asc";

interface AscOptions {
  readFile(filename: string, baseDir: string): Promise<string | null>;
  writeFile(filename: string, contents: Uint8Array | string, baseDir: string): void;
  listFiles(dirname: string, baseDir: string): string[];
  stderr: unknown;
  stdout: unknown;
}

interface Asc {
  main(argv: string[], options: AscOptions): Promise<{ error: Error | null }>;
  memoryStream(sink: (chunk: string) => void): unknown;
}

function isObject(x: unknown): x is object {
  return (typeof x === "object" || typeof x === "function") && x !== null;
}

async function loadAsc(): Promise<Asc> {
  const mod: unknown = await import(ASC_MODULE);
  const asc: unknown = isObject(mod) ? Reflect.get(mod, "default") : undefined;
  if (!isObject(asc)) throw new Error("assemblyscript/asc has no default export");
  const main: unknown = Reflect.get(asc, "main");
  const createMemoryStream: unknown = Reflect.get(asc, "createMemoryStream");
  if (typeof main !== "function" || typeof createMemoryStream !== "function") {
    throw new Error("assemblyscript/asc lacks main/createMemoryStream");
  }
  return {
    async main(argv, options) {
      const result: unknown = await Reflect.apply(main, asc, [argv, options]);
      const error: unknown = isObject(result) ? Reflect.get(result, "error") : undefined;
      return { error: error instanceof Error ? error : null };
    },
    memoryStream(sink) {
      return Reflect.apply(createMemoryStream, asc, [
        (chunk: unknown) =>
          sink(typeof chunk === "string" ? chunk : new TextDecoder().decode(toBytes(chunk))),
      ]);
    },
  };
}

function toBytes(chunk: unknown): Uint8Array {
  return chunk instanceof Uint8Array ? chunk : new Uint8Array(0);
}

/** Options shared by both passes. Changing them changes runtime.wasm (rebuild and commit it). */
const ASC_OPTIONS: readonly string[] = [
  "--runtime",
  "stub",
  "--importMemory",
  "--zeroFilledMemory",
  "--optimizeLevel",
  "3",
  "--shrinkLevel",
  "0",
  "--noAssert",
  "--use",
  "abort=abort/writAbort",
  "--disableWarning",
  "AS201",
];

interface Compiled {
  readonly binary: Uint8Array;
  /** Binaryen's text form of the module, with internal names (not written anywhere). */
  readonly text: string;
}

async function compile(entries: readonly string[], heapBase: number, probe: boolean): Promise<Compiled> {
  const asc = await loadAsc();
  let binary: Uint8Array | undefined;
  let text: string | undefined;
  const stderr: string[] = [];
  const result = await asc.main(
    [
      ...entries,
      "--baseDir",
      ASSEMBLY_DIR,
      "--outFile",
      "runtime.wasm",
      "--textFile",
      "runtime.wat",
      ...ASC_OPTIONS,
      "--use",
      `HEAP_BASE=${heapBase}`,
    ],
    {
      readFile: async (filename: string, baseDir: string) => {
        if (probe && filename === PROBE_FILE) return PROBE_SOURCE;
        try {
          return await readFile(join(baseDir, filename), "utf8");
        } catch {
          return null;
        }
      },
      writeFile: (filename: string, contents: Uint8Array | string) => {
        if (filename === "runtime.wasm" && typeof contents !== "string") binary = contents;
        if (filename === "runtime.wat" && typeof contents === "string") text = contents;
      },
      listFiles: () => [],
      stderr: asc.memoryStream((chunk) => stderr.push(chunk)),
      stdout: asc.memoryStream(() => {}),
    },
  );
  if (result.error) throw new Error(`asc failed: ${result.error.message}\n${stderr.join("")}`);
  if (!binary || text === undefined) throw new Error(`asc produced no output\n${stderr.join("")}`);
  return { binary, text };
}

function stubImports(): WasmImports {
  const fail = (): never => {
    throw new Error("runtime import called during the build probe");
  };
  const memory = new Wasm.Memory({ initial: 5 });
  return {
    env: {
      memory,
      opa_abort: fail,
      opa_println: fail,
      opa_builtin0: fail,
      opa_builtin1: fail,
      opa_builtin2: fail,
      opa_builtin3: fail,
      opa_builtin4: fail,
    },
    writ: { eval_ctx: fail, entrypoints: fail, builtins: fail },
  };
}

async function probeHeapBase(): Promise<number> {
  const { binary } = await compile(["index.ts", PROBE_FILE], 0, true);
  const instance = new Wasm.Instance(new Wasm.Module(binary), stubImports());
  const value = exportedFunction(instance, PROBE_EXPORT)();
  return (value + 7) & ~7;
}

/**
 * Compiles the runtime and returns runtime.wasm's bytes (and the module's text form). Fails if the
 * module pulled in AssemblyScript's managed runtime (`~lib/rt`), has a start function, or imports
 * anything but the SDK's `env` functions and the linker's `writ` placeholders.
 */
export async function buildRuntime(): Promise<Compiled> {
  const heapBase = await probeHeapBase();
  const compiled = await compile(["index.ts"], heapBase, false);
  const { text } = compiled;
  const binary = meterRuntime(compiled.binary);
  if (text.includes("~lib/rt")) throw new Error("runtime uses AssemblyScript's managed runtime (~lib/rt)");
  if (/^\s*\(start /m.test(text)) throw new Error("runtime has a start function");
  const imports = Wasm.Module.imports(new Wasm.Module(binary)).map((i) => `${i.module}.${i.name}`);
  const allowed = new Set([
    "env.memory",
    "env.opa_abort",
    "env.opa_println",
    "env.opa_builtin0",
    "env.opa_builtin1",
    "env.opa_builtin2",
    "env.opa_builtin3",
    "env.opa_builtin4",
    "writ.eval_ctx",
    "writ.entrypoints",
    "writ.builtins",
    `${FUEL_OUT_IMPORT.module}.${FUEL_OUT_IMPORT.base}`,
  ]);
  const unexpected = imports.filter((i) => !allowed.has(i));
  if (unexpected.length > 0) throw new Error(`runtime imports unexpected symbols: ${unexpected.join(", ")}`);
  return { binary, text };
}

/**
 * The runtime with every loop metered (`wasm/meter.ts`): a mutable fuel global, exported as
 * `writ_fuel`, and the placeholder import `writ.fuel_out` the linker defines.
 */
function meterRuntime(bytes: Uint8Array): Uint8Array {
  const m = binaryen.readBinary(bytes);
  try {
    m.setFeatures(FEATURES);
    const fuel = "writ_fuel";
    const fuelOut = "writ_fuel_out";
    m.addGlobal(fuel, binaryen.i32, true, m.i32.const(FUEL_PER_CHECK));
    m.addGlobalExport(fuel, FUEL_GLOBAL_EXPORT);
    m.addFunctionImport(fuelOut, FUEL_OUT_IMPORT.module, FUEL_OUT_IMPORT.base, binaryen.none, binaryen.none);
    meterLoops(m, fuel, fuelOut);
    if (!m.validate()) throw new Error("the metered runtime does not validate");
    return m.emitBinary();
  } finally {
    m.dispose();
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

async function cli(): Promise<void> {
  const { binary } = await buildRuntime();
  if (process.argv.includes("--check")) {
    const committed = new Uint8Array(await readFile(RUNTIME_WASM_PATH));
    if (!sameBytes(committed, binary)) {
      process.stderr.write("runtime.wasm is stale: run `npx tsx src/rego/runtime/build.ts`\n");
      process.exitCode = 1;
      return;
    }
    process.stdout.write(`runtime.wasm is up to date (${binary.length} bytes)\n`);
    return;
  }
  await writeFile(RUNTIME_WASM_PATH, binary);
  process.stdout.write(`wrote ${RUNTIME_WASM_PATH} (${binary.length} bytes)\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await cli();
}
