/**
 * Loading a compiled policy module (or a bundle holding one) into the official
 * `@open-policy-agent/opa-wasm` SDK, with Writ's host builtins wired in.
 *
 * The host builtins a module needs are read from the module itself (its `builtins()` export,
 * as the SDK reads it), so modules built by a real `opa` load the same way as Writ's.
 */

import { type LoadedPolicy, loadPolicy } from "@open-policy-agent/opa-wasm";
import { z } from "zod";
import { errorMessage } from "../core/errors.ts";
import { type BuiltinContext, systemContext } from "./builtins/index.ts";
import { type Bundle, type BundleManifest, type DataObject, readBundle } from "./bundle/index.ts";
import { hasHostBuiltin, hostBuiltinsFor, hostImportName } from "./host/index.ts";
import { parseValueText, toJSON } from "./plan/value.ts";
import { TRACE_BUILTIN, type TraceEvent, TraceKind } from "./trace.ts";
import { Wasm, type WasmInstance, type WasmModule } from "./wasm/host.ts";

/** A loaded policy. Evaluations run one at a time (the SDK's instance is not re-entrant). */
export interface Policy {
  /** Entrypoint names in `entrypoints()` order. */
  readonly entrypoints: readonly string[];
  /** The builtins the module imports (host calls), by import name. */
  readonly hostBuiltins: readonly string[];
  /** Replaces the base documents (`data`). */
  setData(data: DataObject): void;
  /**
   * The result set of `entrypoint` for `input` (undefined for no input; an ArrayBuffer is the
   * input's JSON text as UTF-8): `[{"result": …}]`, `[]` when undefined. Throws
   * `PolicyEvaluationError` when evaluation fails.
   */
  evaluate(input: unknown, entrypoint: string): unknown[];
}

export interface BundlePolicy extends Policy {
  readonly manifest: BundleManifest;
  readonly bundle: Bundle;
}

/** A module or bundle that cannot be loaded. */
export class PolicyLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PolicyLoadError";
  }
}

/** An evaluation that failed inside the module (a conflict, a failed builtin, an abort). */
export class PolicyEvaluationError extends Error {
  readonly entrypoint: string;
  /** The module's own message, such as `policy.rego:3:1: var assignment conflict`. */
  readonly detail: string;

  constructor(entrypoint: string, detail: string) {
    super(`evaluation of ${entrypoint} failed: ${detail}`);
    this.name = "PolicyEvaluationError";
    this.entrypoint = entrypoint;
    this.detail = detail;
  }
}

/** Builtins the SDK answers itself; it never asks `customBuiltins` for them. */
const SDK_BUILTINS: ReadonlySet<string> = new Set([
  "sprintf",
  "regex.split",
  "json.is_valid",
  "yaml.is_valid",
  "yaml.marshal",
  "yaml.unmarshal",
]);

const nameToIdSchema = z.record(z.string(), z.number().int());

function compileModule(wasm: Uint8Array): WasmModule {
  try {
    return new Wasm.Module(wasm);
  } catch (error) {
    throw new PolicyLoadError(
      `the policy module is not valid WebAssembly (${errorMessage(error)}): rebuild it with \`writ policy build\``,
    );
  }
}

function exportedFunction(instance: WasmInstance, name: string): (...args: number[]) => number {
  const fn: unknown = instance.exports[name];
  if (typeof fn !== "function") {
    throw new PolicyLoadError(
      `the module does not export ${name}(), so it is not an OPA Wasm policy: build it with \`writ policy build\` or \`opa build -t wasm\``,
    );
  }
  return (...args: number[]): number => {
    const result: unknown = Reflect.apply(fn, undefined, args);
    if (typeof result !== "number") throw new PolicyLoadError(`the module's ${name}() returned no address`);
    return result;
  };
}

/**
 * The builtins a policy module imports, by name: its `builtins()` export, read from a throwaway
 * instance the way the SDK reads it (`opa_json_dump` of the returned value).
 */
export function moduleBuiltins(module: WasmModule): string[] {
  const memory = new Wasm.Memory({ initial: 5 });
  const refuse = () => {
    throw new PolicyLoadError("the module called a builtin while it was being inspected");
  };
  let instance: WasmInstance;
  try {
    instance = new Wasm.Instance(module, {
      env: {
        memory,
        opa_abort: refuse,
        opa_println: () => {},
        opa_builtin0: refuse,
        opa_builtin1: refuse,
        opa_builtin2: refuse,
        opa_builtin3: refuse,
        opa_builtin4: refuse,
      },
    });
  } catch (error) {
    throw new PolicyLoadError(
      `the module does not link as an OPA Wasm policy (${errorMessage(error)}): build it with \`writ policy build\` or \`opa build -t wasm\``,
    );
  }
  const builtins = exportedFunction(instance, "builtins");
  const dump = exportedFunction(instance, "opa_json_dump");
  const address = dump(builtins());
  const bytes = new Uint8Array(memory.buffer);
  const end = bytes.indexOf(0, address);
  if (end < 0) throw new PolicyLoadError("the module's builtins() list is not a NUL-terminated string");
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytes.subarray(address, end)));
  } catch (error) {
    throw new PolicyLoadError(`the module's builtins() list is not JSON (${errorMessage(error)})`);
  }
  const map = nameToIdSchema.safeParse(parsed);
  if (!map.success) throw new PolicyLoadError('the module\'s builtins() list is not {"name": id, …}');
  return Object.entries(map.data)
    .sort(([, a], [, b]) => a - b)
    .map(([name]) => name);
}

export interface CompiledPolicyInput {
  wasm: Uint8Array;
  /**
   * The builtins the module imports (`buildPolicy`'s `hostBuiltins`); read from the module
   * when omitted.
   */
  hostBuiltins?: readonly string[];
  data?: DataObject;
  /**
   * Where an instrumented build's trace events go (`buildPolicy`'s `instrument`). A module that
   * calls the trace builtin loads only with one: an instrumented build never serves traffic.
   */
  trace?: (event: TraceEvent) => void;
}

const encoder = new TextEncoder();

/**
 * JSON text as an ArrayBuffer: the SDK copies it in as is (and treats `false`, `0`, `""` as input).
 * An ArrayBuffer is taken as the input's JSON text already (a policy evaluator thread's input).
 */
function jsonBuffer(value: unknown): ArrayBuffer | undefined {
  if (value instanceof ArrayBuffer) return value;
  const text = JSON.stringify(value);
  if (text === undefined) return undefined;
  const bytes = encoder.encode(text);
  // The encoder's bytes normally fill a buffer of their own: hand it over without a copy.
  const { buffer } = bytes;
  if (buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && buffer.byteLength === bytes.byteLength)
    return buffer;
  const copy = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(copy).set(bytes);
  return copy;
}

async function load(
  module: WasmModule,
  hostBuiltins: readonly string[],
  data: DataObject,
  trace?: (event: TraceEvent) => void,
): Promise<Policy> {
  const traceImports = hostBuiltins.filter((name) => isTraceImport(name));
  if (traceImports.length > 0 && trace === undefined) {
    throw new PolicyLoadError(
      "the module is an instrumented build (for explanations and coverage), which never serves decisions: build the policy without instrumentation",
    );
  }
  const missing = hostBuiltins.filter(
    (name) => !SDK_BUILTINS.has(name) && !hasHostBuiltin(name) && !isTraceImport(name),
  );
  if (missing.length > 0) {
    throw new PolicyLoadError(
      `the policy calls ${missing.join(", ")}, which Writ cannot run (see \`writ policy capabilities\`): remove the call${missing.length === 1 ? "" : "s"}, or replace ${missing.length === 1 ? "it" : "them"} with \`with\` in tests`,
    );
  }
  // One clock reading per evaluation: `evaluate` starts a fresh context.
  let context: BuiltinContext = systemContext();
  const custom = hostBuiltinsFor(
    hostBuiltins.filter((name) => !SDK_BUILTINS.has(name) && !isTraceImport(name)),
    () => context,
  );
  if (trace) for (const name of traceImports) custom[name] = traceBuiltin(trace);
  let sdk: LoadedPolicy;
  try {
    sdk = await loadPolicy(module, undefined, custom);
    sdk.setData(data);
  } catch (error) {
    throw new PolicyLoadError(`the SDK could not load the policy module: ${errorMessage(error)}`);
  }
  const ids = nameToIdSchema.safeParse(sdk.entrypoints);
  if (!ids.success) throw new PolicyLoadError('the module\'s entrypoints() list is not {"name": id, …}');
  const entrypointIds = new Map(Object.entries(ids.data));
  const entrypoints = [...entrypointIds.entries()].sort(([, a], [, b]) => a - b).map(([name]) => name);

  return {
    entrypoints,
    hostBuiltins: [...hostBuiltins],
    setData(next) {
      try {
        sdk.setData(next);
      } catch (error) {
        throw new PolicyLoadError(`the module could not take the data: ${errorMessage(error)}`);
      }
    },
    evaluate(input, entrypoint) {
      const id = entrypointIds.get(entrypoint);
      if (id === undefined) {
        throw new PolicyLoadError(
          `the policy has no entrypoint ${entrypoint} (it has ${entrypoints.join(", ") || "none"}): build it with -e ${entrypoint}`,
        );
      }
      context = systemContext();
      let result: unknown;
      try {
        result = sdk.evaluate(jsonBuffer(input), id);
      } catch (error) {
        throw new PolicyEvaluationError(entrypoint, errorMessage(error));
      }
      if (!Array.isArray(result)) {
        throw new PolicyEvaluationError(
          entrypoint,
          `the module returned ${JSON.stringify(result)}, not a result set`,
        );
      }
      return result;
    },
  };
}

/** Loads a module produced by `buildPolicy` (or any OPA Wasm module). */
export async function loadCompiledPolicy(input: CompiledPolicyInput): Promise<Policy> {
  const module = compileModule(input.wasm);
  const hostBuiltins = input.hostBuiltins ?? moduleBuiltins(module);
  return load(module, hostBuiltins, input.data ?? {}, input.trace);
}

const traceImportNames = new Set([hostImportName(TRACE_BUILTIN), hostImportName(TRACE_BUILTIN, true)]);

function isTraceImport(name: string): boolean {
  return traceImportNames.has(name);
}

/** The trace builtin's host side: `(kind, site, bindings)` as Rego value text, to an event. */
function traceBuiltin(sink: (event: TraceEvent) => void): (...args: unknown[]) => unknown {
  return (kindText: unknown, siteText: unknown, bindingsText: unknown) => {
    const kind = Number(kindText);
    const site = Number(siteText);
    if (
      (kind === TraceKind.enter || kind === TraceKind.held || kind === TraceKind.rule) &&
      Number.isInteger(site)
    ) {
      const bindings = typeof bindingsText === "string" ? toJSON(parseValueText(bindingsText)) : null;
      sink({
        kind,
        site,
        ...(typeof bindings === "object" && bindings !== null && !Array.isArray(bindings)
          ? { bindings: Object.fromEntries(Object.entries(bindings)) }
          : {}),
      });
    }
    return "true";
  };
}

/** Loads the module of a bundle (bytes of a `.tar.gz`, or a bundle already read) with its data. */
export async function loadPolicyFromBundle(source: Uint8Array | Bundle): Promise<BundlePolicy> {
  const bundle = source instanceof Uint8Array ? await readBundle(source) : source;
  if (!bundle.wasm) {
    throw new PolicyLoadError(
      "the bundle holds no policy.wasm (it was built for the Rego target): rebuild it with `writ policy build` or `opa build -t wasm`",
    );
  }
  const module = compileModule(bundle.wasm);
  const policy = await load(module, moduleBuiltins(module), bundle.data);
  const absent = bundle.manifest.wasm.map((r) => r.entrypoint).filter((e) => !policy.entrypoints.includes(e));
  if (absent.length > 0) {
    throw new PolicyLoadError(
      `the manifest lists entrypoint${absent.length === 1 ? "" : "s"} ${absent.join(", ")}, which policy.wasm does not export: rebuild the bundle`,
    );
  }
  return { ...policy, manifest: bundle.manifest, bundle };
}
