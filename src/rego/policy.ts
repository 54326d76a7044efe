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
import {
  type BuiltinContext,
  type BuiltinDeclaration,
  type CustomBuiltins,
  customDeclarationSchema,
  lookupBuiltin,
  systemContext,
} from "./builtins/index.ts";
import { type Bundle, type BundleManifest, type DataObject, readBundle } from "./bundle/index.ts";
import {
  BUDGET_BUILTIN,
  hasHostBuiltin,
  hostBuiltinsFor,
  hostImportName,
  importedBuiltin,
} from "./host/index.ts";
import { type OpaRuntime, runtimeDocument } from "./opa-runtime.ts";
import { fromJSON, parseValueText, toJSON } from "./plan/value.ts";
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
   * Whether the module stops itself at a deadline (`evaluate`'s `budgetMs`): a module Writ
   * built meters its loops (`wasm/meter.ts`); one built by `opa` does not, and runs to its end.
   */
  readonly metered: boolean;
  /**
   * The result set of `entrypoint` for `input` (undefined for no input; an ArrayBuffer is the
   * input's JSON text as UTF-8): `[{"result": …}]`, `[]` when undefined. Throws
   * `PolicyEvaluationError` when evaluation fails, and `EvaluationBudgetExceeded` (a subclass)
   * when a metered module ran past `budgetMs` (the module stopped there; the instance stays
   * usable).
   */
  evaluate(input: unknown, entrypoint: string, budgetMs?: number): unknown[];
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

/** A metered evaluation stopped at its budget (`Policy.evaluate`'s `budgetMs`). */
export class EvaluationBudgetExceeded extends PolicyEvaluationError {
  readonly budgetMs: number;

  constructor(entrypoint: string, budgetMs: number) {
    super(entrypoint, `the policy ran past its ${budgetMs} ms budget and was stopped there`);
    this.name = "EvaluationBudgetExceeded";
    this.budgetMs = budgetMs;
  }
}

/** Thrown by the budget builtin past the deadline; unwinds the module's evaluation. */
class OverBudget extends Error {}

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
  /** The custom builtins the module was compiled against (`buildPolicy`'s `builtins`). */
  builtins?: CustomBuiltins;
  /** What `opa.runtime()` shows (`opa-runtime.ts`); without it, an empty object (as OPA's library). */
  runtime?: OpaRuntime;
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

const HOW_TO_GIVE_BUILTINS =
  "give the module that defines it with --builtins <module.mjs> (writ policy commands) or policy.builtins (the gateway's configuration)";

/** Host imports that neither Writ, the SDK nor the given custom builtins implement, as an error. */
function missingBuiltins(
  names: readonly string[],
  custom: CustomBuiltins | undefined,
): PolicyLoadError | undefined {
  const missing = names.filter(
    (name) => !SDK_BUILTINS.has(name) && !hasHostBuiltin(name, custom) && !isTraceImport(name),
  );
  if (missing.length === 0) return undefined;
  const builtins = [...new Set(missing.map(importedBuiltin))];
  const unknown = builtins.filter((b) => lookupBuiltin(b) === undefined);
  if (unknown.length > 0) {
    const list = unknown.join(", ");
    return new PolicyLoadError(
      `the policy calls custom builtin${unknown.length === 1 ? "" : "s"} ${list}, which ${unknown.length === 1 ? "is" : "are"} not loaded: ${HOW_TO_GIVE_BUILTINS}`,
    );
  }
  return new PolicyLoadError(
    `the policy calls ${builtins.join(", ")}, which Writ cannot run (see \`writ policy capabilities\`): remove the call${builtins.length === 1 ? "" : "s"}, or replace ${builtins.length === 1 ? "it" : "them"} with \`with\` in tests`,
  );
}

async function load(
  module: WasmModule,
  hostBuiltins: readonly string[],
  data: DataObject,
  trace: ((event: TraceEvent) => void) | undefined,
  builtins: CustomBuiltins | undefined,
  runtime?: OpaRuntime,
): Promise<Policy> {
  const traceImports = hostBuiltins.filter((name) => isTraceImport(name));
  if (traceImports.length > 0 && trace === undefined) {
    throw new PolicyLoadError(
      "the module is an instrumented build (for explanations and coverage), which never serves decisions: build the policy without instrumentation",
    );
  }
  const missing = missingBuiltins(hostBuiltins, builtins);
  if (missing) throw missing;
  // One clock reading per evaluation: `evaluate` starts a fresh context.
  const runtimeValue = runtime === undefined ? undefined : fromJSON(runtimeDocument(runtime));
  const newContext = () => systemContext(undefined, runtimeValue);
  let context: BuiltinContext = newContext();
  const custom = hostBuiltinsFor(
    hostBuiltins.filter((name) => !SDK_BUILTINS.has(name) && !isTraceImport(name)),
    () => context,
    builtins,
  );
  if (trace) for (const name of traceImports) custom[name] = traceBuiltin(trace);
  // The deadline of the evaluation running (none outside one): the metered module asks the budget
  // builtin every FUEL_PER_CHECK loop iterations, and every host builtin is checked as it returns.
  let deadline = Number.POSITIVE_INFINITY;
  const checkDeadline = () => {
    if (performance.now() > deadline) throw new OverBudget();
  };
  const budgetImport = hostImportName(BUDGET_BUILTIN);
  const metered = hostBuiltins.includes(budgetImport);
  for (const [name, builtin] of Object.entries(custom)) {
    custom[name] =
      name === budgetImport
        ? () => {
            checkDeadline();
            // Undefined: the SDK then writes nothing into the module, which may be in the middle
            // of any runtime loop (parsing the input, say) when its fuel runs out.
            return undefined;
          }
        : (...args: unknown[]) => {
            const result = builtin(...args);
            checkDeadline();
            return result;
          };
  }
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
    metered,
    setData(next) {
      try {
        sdk.setData(next);
      } catch (error) {
        throw new PolicyLoadError(`the module could not take the data: ${errorMessage(error)}`);
      }
    },
    evaluate(input, entrypoint, budgetMs) {
      const id = entrypointIds.get(entrypoint);
      if (id === undefined) {
        throw new PolicyLoadError(
          `the policy has no entrypoint ${entrypoint} (it has ${entrypoints.join(", ") || "none"}): build it with -e ${entrypoint}`,
        );
      }
      context = newContext();
      let result: unknown;
      const text = jsonBuffer(input);
      deadline = budgetMs === undefined ? Number.POSITIVE_INFINITY : performance.now() + budgetMs;
      try {
        result = sdk.evaluate(text, id);
      } catch (error) {
        if (error instanceof OverBudget && budgetMs !== undefined)
          throw new EvaluationBudgetExceeded(entrypoint, budgetMs);
        throw new PolicyEvaluationError(entrypoint, errorMessage(error));
      } finally {
        deadline = Number.POSITIVE_INFINITY;
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
  return load(module, hostBuiltins, input.data ?? {}, input.trace, input.builtins, input.runtime);
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

/** The manifest's `metadata` key under which a bundle records the custom builtins it needs. */
export const CUSTOM_BUILTINS_METADATA = "custom_builtins";

const recordedSchema = z.array(customDeclarationSchema);

function signature(d: BuiltinDeclaration): string {
  return JSON.stringify({ args: d.decl.args ?? [], result: d.decl.result ?? { type: "any" } });
}

/**
 * Checks the custom builtins a bundle's manifest records against those given: each must be
 * given, with the declaration the bundle was compiled against.
 */
function checkRecordedBuiltins(manifest: BundleManifest, custom: CustomBuiltins | undefined): void {
  const recorded: unknown = manifest.metadata?.[CUSTOM_BUILTINS_METADATA];
  if (recorded === undefined) return;
  const parsed = recordedSchema.safeParse(recorded);
  if (!parsed.success) {
    throw new PolicyLoadError(
      `the manifest's metadata.${CUSTOM_BUILTINS_METADATA} is not a list of builtin declarations: rebuild the bundle with \`writ policy build\``,
    );
  }
  for (const needed of parsed.data) {
    const given = custom?.get(needed.name);
    if (!given) {
      throw new PolicyLoadError(
        `the bundle was compiled against custom builtin ${needed.name}, which is not loaded: ${HOW_TO_GIVE_BUILTINS}`,
      );
    }
    const want = { name: needed.name, decl: needed.decl };
    if (signature(given.declaration) !== signature(want)) {
      throw new PolicyLoadError(
        `the bundle was compiled against custom builtin ${needed.name} declared ${signature(want)}, but ${given.source} declares it ${signature(given.declaration)}: rebuild the bundle, or load the module it was built with`,
      );
    }
  }
}

export interface BundleLoadOptions {
  /** The custom builtins the bundle's module calls. */
  builtins?: CustomBuiltins;
  /** What `opa.runtime()` shows, as for {@link CompiledPolicyInput}. */
  runtime?: OpaRuntime;
}

/** Loads the module of a bundle (bytes of a `.tar.gz`, or a bundle already read) with its data. */
export async function loadPolicyFromBundle(
  source: Uint8Array | Bundle,
  options: BundleLoadOptions = {},
): Promise<BundlePolicy> {
  const bundle = source instanceof Uint8Array ? await readBundle(source) : source;
  if (!bundle.wasm) {
    throw new PolicyLoadError(
      "the bundle holds no policy.wasm (it was built for the Rego target): rebuild it with `writ policy build` or `opa build -t wasm`",
    );
  }
  checkRecordedBuiltins(bundle.manifest, options.builtins);
  const module = compileModule(bundle.wasm);
  const policy = await load(
    module,
    moduleBuiltins(module),
    bundle.data,
    undefined,
    options.builtins,
    options.runtime,
  );
  const absent = bundle.manifest.wasm.map((r) => r.entrypoint).filter((e) => !policy.entrypoints.includes(e));
  if (absent.length > 0) {
    throw new PolicyLoadError(
      `the manifest lists entrypoint${absent.length === 1 ? "" : "s"} ${absent.join(", ")}, which policy.wasm does not export: rebuild the bundle`,
    );
  }
  return { ...policy, manifest: bundle.manifest, bundle };
}
