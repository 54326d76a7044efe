/**
 * A policy folder's sources to a loaded policy (for `PolicyEngine`): from the compiled-policy
 * cache when it holds an entry that loads with the entrypoint, else compiled by Writ's compiler
 * (imported only then, binaryen with it) and kept in the cache. Every module is metered
 * (`rego/wasm/meter.ts`), so the engine evaluates it on the calling thread, stopped at its budget.
 */
import type { RegoSource } from "../rego/build.ts";
import type { CustomBuiltins } from "../rego/builtins/custom.ts";
import { importedBuiltin } from "../rego/host/index.ts";
import type { OpaRuntime } from "../rego/opa-runtime.ts";
import { loadCompiledPolicy, type Policy } from "../rego/policy.ts";
import type { CompiledPolicyCache } from "./compiled-cache.ts";
import { PolicyLoadError } from "./errors.ts";

/** Why a policy calling `opa.runtime` is refused, and what to do. */
export const OPA_RUNTIME_DISABLED =
  "policy.opa_runtime.enabled is false in Writ's configuration: remove the call, or enable it and list the environment variables it may show in policy.opa_runtime.env";

/** What `opa.runtime()` shows a loaded policy; nothing when it is disabled (no policy calls it). */
export function runtimeOption(opaRuntime: OpaRuntime | "disabled"): { runtime?: OpaRuntime } {
  return opaRuntime === "disabled" ? {} : { runtime: opaRuntime };
}

/** Whether a module that imports these host builtins calls `opa.runtime` while it is disabled. */
export function refusesRuntime(
  opaRuntime: OpaRuntime | "disabled",
  hostBuiltins: readonly string[],
): boolean {
  return opaRuntime === "disabled" && hostBuiltins.some((name) => importedBuiltin(name) === "opa.runtime");
}

export interface CompileSettings {
  entrypoint: string;
  cache: CompiledPolicyCache;
  builtins: CustomBuiltins | undefined;
  strictBuiltinErrors: boolean;
  opaRuntime: OpaRuntime | "disabled";
}

export interface CompiledSources {
  policy: Policy;
  wasm: Uint8Array;
  hostBuiltins: string[];
}

/** The policy compiled from `sources` (in `dir`, for errors). Throws PolicyLoadError. */
export async function compileSources(
  settings: CompileSettings,
  sources: RegoSource[],
  data: Record<string, unknown>,
  dir: string,
): Promise<CompiledSources> {
  const { entrypoint, cache, builtins, strictBuiltinErrors: strict, opaRuntime } = settings;
  const runtime = runtimeOption(opaRuntime);
  const key = cache.enabled
    ? await cache.key(entrypoint, sources, builtins?.fingerprint(), strict).catch(() => undefined)
    : undefined;
  const hit = key === undefined ? undefined : await cache.get(key);
  // A module that calls a refused opa.runtime is compiled again, to say where it calls it.
  if (hit !== undefined && !refusesRuntime(opaRuntime, hit.hostBuiltins)) {
    const policy = await loadCompiledPolicy({ ...hit, data, builtins, ...runtime }).catch(() => undefined);
    if (policy?.entrypoints.includes(entrypoint))
      return { policy, ...hit, hostBuiltins: [...hit.hostBuiltins] };
  }
  const { buildPolicy } = await import("../rego/build.ts");
  const built = buildPolicy(sources, {
    entrypoints: [entrypoint],
    builtins,
    strictBuiltinErrors: strict,
    budget: true,
    ...(opaRuntime === "disabled"
      ? { refusedBuiltins: new Map([["opa.runtime", OPA_RUNTIME_DISABLED]]) }
      : {}),
  });
  if (!built.wasm) {
    throw new PolicyLoadError(
      `the policies in ${dir} do not compile`,
      built.errors.map((e) => e.message),
    );
  }
  const policy = await loadCompiledPolicy({
    wasm: built.wasm,
    hostBuiltins: built.hostBuiltins,
    data,
    builtins,
    ...runtime,
  });
  if (key !== undefined && policy.entrypoints.includes(entrypoint)) {
    await cache.put(key, { wasm: built.wasm, hostBuiltins: built.hostBuiltins });
  }
  return { policy, wasm: built.wasm, hostBuiltins: built.hostBuiltins };
}
