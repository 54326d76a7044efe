/**
 * The QuickJS WebAssembly instance the runs share. The module is compiled once per process (on
 * the first run); an instance is made from it with a WebAssembly memory of bounded size, so
 * whatever programs allocate, the sandbox holds at most `INSTANCE_MEMORY_BYTES` of the host's
 * memory. WebAssembly memory never shrinks: an instance that grew past `RECYCLE_BYTES` is
 * replaced by a fresh one once no run uses it, and one that faulted is replaced at once.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { QuickJSSyncVariant, QuickJSWASMModule } from "quickjs-emscripten-core";
import { WritError } from "../core/errors.ts";
import { isRecord } from "../core/json.ts";
import type { EngineRun } from "./sandbox-run.ts";

/** The most WebAssembly memory one instance may use, for all the runs on it together. */
export const INSTANCE_MEMORY_BYTES = 256 * 1024 * 1024;
/** An idle instance whose memory grew past this is dropped for a fresh one. */
const RECYCLE_BYTES = 64 * 1024 * 1024;
const PAGE = 64 * 1024;
const INITIAL_BYTES = 16 * 1024 * 1024;

export interface SandboxInstance {
  module: QuickJSWASMModule;
  /** The runs in progress on it. */
  runs: Set<EngineRun>;
}

type Core = typeof import("quickjs-emscripten-core");

/** The WebAssembly global as far as this file uses it (Writ's TypeScript lib has its types only). */
interface WasmApi {
  Memory: new (descriptor: {
    initial: number;
    maximum: number;
  }) => ReturnType<QuickJSWASMModule["getWasmMemory"]>;
  compile(bytes: Uint8Array): Promise<WebAssembly.Module>;
}
const Wasm: WasmApi = Reflect.get(globalThis, "WebAssembly");

let compiled: Promise<{ core: Core; variant: QuickJSSyncVariant; wasm: WebAssembly.Module }> | undefined;
let current: Promise<SandboxInstance> | undefined;

/** The instance new runs go to (made on first use, and after the last one was dropped). */
export function sandboxInstance(): Promise<SandboxInstance> {
  if (current !== undefined) return current;
  const making = instantiate();
  current = making;
  making.catch(() => {
    if (current === making) current = undefined;
  });
  return making;
}

/** The current instance if one is made (no loading). */
export async function loadedInstance(): Promise<SandboxInstance | undefined> {
  return current === undefined ? undefined : await current.catch(() => undefined);
}

/** The instance faulted: new runs go to a fresh one; the runs on it are stopped. */
export async function dropInstance(instance: SandboxInstance): Promise<void> {
  if (current !== undefined && (await current.catch(() => undefined)) === instance) current = undefined;
}

/** A run ended: an idle instance that grew large is replaced, to give its memory back. */
export async function releaseRun(instance: SandboxInstance, run: EngineRun): Promise<void> {
  instance.runs.delete(run);
  if (instance.runs.size === 0 && instance.module.getWasmMemory().buffer.byteLength > RECYCLE_BYTES) {
    await dropInstance(instance);
  }
}

async function instantiate(): Promise<SandboxInstance> {
  compiled ??= compile();
  compiled.catch(() => {
    compiled = undefined;
  });
  const { core, variant, wasm } = await compiled;
  const wasmMemory = new Wasm.Memory({
    initial: INITIAL_BYTES / PAGE,
    maximum: INSTANCE_MEMORY_BYTES / PAGE,
  });
  const module = await core.newQuickJSWASMModuleFromVariant(
    core.newVariant(variant, { wasmModule: wasm, wasmMemory }),
  );
  return { module, runs: new Set() };
}

async function compile() {
  const [core, namespace] = await Promise.all([
    import("quickjs-emscripten-core"),
    import("@jitl/quickjs-wasmfile-release-sync"),
  ]);
  const file = createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/wasm");
  const wasm = await Wasm.compile(await readFile(file));
  return { core, variant: syncVariant(namespace), wasm };
}

/**
 * The variant package's default export: ESM gives it as `default`; its types describe the CommonJS
 * build, where it sits one `default` deeper.
 */
function syncVariant(namespace: unknown): QuickJSSyncVariant {
  const outer = isRecord(namespace) ? namespace.default : undefined;
  const candidate = isRecord(outer) && !isSyncVariant(outer) ? outer.default : outer;
  if (isSyncVariant(candidate)) return candidate;
  throw new WritError("internal", "@jitl/quickjs-wasmfile-release-sync does not export a QuickJS variant", {
    suggestedFix: "install the version in package.json (npm install)",
  });
}

function isSyncVariant(value: unknown): value is QuickJSSyncVariant {
  return isRecord(value) && value.type === "sync" && typeof value.importFFI === "function";
}
