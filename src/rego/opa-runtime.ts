/**
 * The document `opa.runtime()` answers, in OPA's shape (`runtime.Term` in `v1/runtime`):
 * `{"env": {…}, "version": …, "commit": …, "config": {…}}`. The host chooses what it shows: the
 * `writ policy` commands show the whole environment, as `opa eval` and `opa test` do; the gateway
 * only the variables its configuration lists (`policy.opa_runtime`), so that no secret reaches a
 * decision unless asked for.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";

export interface OpaRuntime {
  /** The environment variables the policy sees, by name. */
  env: Readonly<Record<string, string>>;
  /** What `config` shows (OPA shows its configuration with credentials and keys removed). */
  config: Readonly<Record<string, unknown>>;
}

const manifestSchema = z.object({ version: z.string() });

let version: string | undefined;

/** Writ's version, from the package's package.json (two folders up from src/rego and dist/rego). */
function writVersion(): string {
  if (version !== undefined) return version;
  try {
    const text = readFileSync(new URL("../../package.json", import.meta.url), "utf8");
    const parsed = manifestSchema.safeParse(JSON.parse(text));
    version = parsed.success ? parsed.data.version : "unknown";
  } catch {
    version = "unknown";
  }
  return version;
}

/** The document `opa.runtime()` answers for `runtime`. */
export function runtimeDocument(runtime: OpaRuntime): Record<string, unknown> {
  return { env: { ...runtime.env }, version: writVersion(), commit: "", config: { ...runtime.config } };
}

/** The process's environment, the names in `names` only when given. */
export function environment(names?: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && (names === undefined || names.includes(name))) env[name] = value;
  }
  return env;
}

/** What the `writ policy` commands show: the whole environment and no configuration. */
export function processRuntime(): OpaRuntime {
  return { env: environment(), config: {} };
}
