/**
 * The gateway's policy engines from the configuration: the live policy and a shadow candidate,
 * each loaded from a folder or a bundle, watching its source, its revisions archived.
 */
import path from "node:path";
import { samplePoliciesDir } from "../config/config.ts";
import type { GatewayConfig } from "../config/index.ts";
import type { CredentialResolver } from "../dispatch/index.ts";
import { compiledCacheBeside } from "../policy/compiled-cache.ts";
import {
  bundleOrigin,
  type CustomBuiltins,
  environment,
  type OpaRuntime,
  PolicyEngine,
  type PolicyEngineOptions,
  type RevisionArchive,
} from "../policy/index.ts";
import { postgresSettings } from "../store/open.ts";
import type { Closers } from "./closers.ts";

/** Where a policy comes from: a folder, or a bundle file or server (`policy:`, `policy.shadow:`). */
interface PolicySource {
  dir: string;
  /** The Rego version of the folder's files. */
  rego_version: 0 | 1;
  bundle?: string | undefined;
  bundle_poll_interval_s: number;
  bundle_credentials_ref?: string | undefined;
  watch: boolean;
}

/** Loads a policy engine for the configured entrypoint and keeps it watching its source. */
export async function startPolicyEngine(
  what: "policy" | "shadow policy",
  source: PolicySource,
  parts: {
    config: GatewayConfig;
    credentials: CredentialResolver;
    closers: Closers;
    revisions: RevisionArchive;
    builtins: CustomBuiltins | undefined;
  },
  reloaded: (result: "ok" | "failed") => void = () => {},
): Promise<PolicyEngine> {
  const { config, credentials, closers, revisions, builtins } = parts;
  const bundleCredentials = source.bundle_credentials_ref;
  const engine = new PolicyEngine({
    onLoad: (loaded) => revisions.keep(loaded),
    entrypoint: config.policy.entrypoint,
    timeBudgetMs: config.policy.time_budget_ms,
    // Held to its budget while it runs, off the event loop (src/policy/evaluator.ts).
    isolate: true,
    strictBuiltinErrors: config.policy.strict_builtin_errors,
    ...(builtins === undefined ? {} : { builtins }),
    regoVersion: source.rego_version,
    opaRuntime: opaRuntimeOf(config.policy),
    ...compiledPolicyOptions(config, source.dir),
    ...(bundleCredentials === undefined
      ? {}
      : { bundleHeaders: () => credentials.resolve(bundleCredentials) }),
  });
  const from = source.bundle ?? source.dir;
  if (source.bundle) await engine.loadBundle(source.bundle);
  else await engine.loadDirectory(source.dir);
  reloaded("ok");
  if (source.watch) {
    const events = {
      onReload: (revision: string) => {
        reloaded("ok");
        console.log(`${what} reloaded from ${from}: revision ${revision}`);
      },
      onError: (error: Error) => {
        reloaded("failed");
        console.error(
          `${what} reload from ${from} failed, keeping revision ${engine.revision}:\n${error.message}`,
        );
      },
    };
    if (source.bundle) engine.watchBundle(source.bundle, events, source.bundle_poll_interval_s * 1000);
    else engine.watchDirectory(source.dir, events);
  }
  closers.push(() => engine.close());
  return engine;
}

/**
 * What `opa.runtime()` shows the gateway's policies (`policy.opa_runtime`): the environment
 * variables listed, and as `config` the policy settings that hold no secret (a bundle server's
 * address without its credentials or query).
 */
function opaRuntimeOf(policy: GatewayConfig["policy"]): OpaRuntime | "disabled" {
  const { enabled, env } = policy.opa_runtime;
  if (!enabled) return "disabled";
  const source = policy.bundle
    ? { bundle: bundleOrigin(policy.bundle), bundle_poll_interval_s: policy.bundle_poll_interval_s }
    : { dir: policy.dir };
  return {
    env: environment(env),
    config: {
      policy: {
        ...source,
        entrypoint: policy.entrypoint,
        watch: policy.watch,
        time_budget_ms: policy.time_budget_ms,
        opa_runtime: { enabled, env: [...env] },
      },
    },
  };
}

/**
 * Compiled policies are kept beside a SQLite file (`.writ/policy-cache/`), so a restart does not
 * compile again; the package's sample policies are named from the package's root, as the entry
 * the build precompiled for them.
 */
export function compiledPolicyOptions(config: GatewayConfig, dir: string): PolicyEngineOptions {
  const sqlite = postgresSettings(config.store) === undefined ? config.store.sqlite : undefined;
  return {
    compiledCache: compiledCacheBeside(sqlite),
    ...(dir === samplePoliciesDir ? { sourceRoot: path.dirname(samplePoliciesDir) } : {}),
  };
}
