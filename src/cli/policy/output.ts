/** How the policy commands report problems: one line each on stderr, exit code 1. */
import { BundleError } from "../../rego/bundle/index.ts";
import type { RegoError } from "../../rego/errors.ts";
import { PolicyEvaluationError, PolicyLoadError } from "../../rego/policy.ts";
import { InputError } from "./inputs.ts";

/** Prints compiler errors as OPA does (`file:line:col: code: message`) and returns 1. */
export function reportRegoErrors(command: string, errors: readonly RegoError[], outcome: string): number {
  for (const error of errors) console.error(error.message);
  console.error(`${command}: ${errors.length} error${errors.length === 1 ? "" : "s"}, ${outcome}`);
  return 1;
}

/**
 * Prints an expected failure (unreadable files, a bad bundle, a failed evaluation) and returns 1;
 * anything else is a bug and is rethrown.
 */
export function reportFailure(command: string, error: unknown): number {
  if (
    error instanceof InputError ||
    error instanceof BundleError ||
    error instanceof PolicyLoadError ||
    error instanceof PolicyEvaluationError
  ) {
    console.error(`${command}: ${error.message}`);
    return 1;
  }
  throw error;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
