/** The candidate policy of a replay: a folder compiled by Writ's compiler, or a bundle. */
import { stat } from "node:fs/promises";
import type { CompiledPolicyCache } from "../policy/compiled-cache.ts";
import { PolicyEngine } from "../policy/index.ts";
import type { RegoVersion } from "../rego/syntax/index.ts";

export interface CandidateOptions {
  /** The decision entrypoint (the configured `policy.entrypoint`). */
  entrypoint: string;
  /** As the live gateway's `policy.time_budget_ms`: slower evaluations fail closed. */
  timeBudgetMs?: number;
  /** Where compiled policies are looked up and kept (default: the shipped ones only). */
  compiledCache?: CompiledPolicyCache;
  /** The Rego version of a candidate folder's files (as the live `policy.rego_version`). */
  regoVersion?: RegoVersion;
}

/**
 * An engine holding the candidate at `source`: a policy folder, a bundle file or a bundle
 * server's URL. Throws PolicyLoadError when it does not load.
 */
export async function loadCandidate(source: string, options: CandidateOptions): Promise<PolicyEngine> {
  const engine = new PolicyEngine({
    entrypoint: options.entrypoint,
    ...(options.timeBudgetMs === undefined ? {} : { timeBudgetMs: options.timeBudgetMs }),
    ...(options.compiledCache === undefined ? {} : { compiledCache: options.compiledCache }),
    ...(options.regoVersion === undefined ? {} : { regoVersion: options.regoVersion }),
  });
  const info = await stat(source).catch(() => undefined);
  if (info?.isDirectory()) await engine.loadDirectory(source);
  else await engine.loadBundle(source);
  return engine;
}
