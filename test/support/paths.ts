import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (the folder holding package.json). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** OPA's conformance cases, kept beside the checkout in `../shared` and never copied into it. */
export const conformanceCasesDir = path.resolve(repoRoot, "../shared/conformance/opa/cases");

export const hasConformanceCases = existsSync(conformanceCasesDir);

if (!hasConformanceCases) {
  console.warn(
    `conformance data not found at ${conformanceCasesDir}: tests that need it are skipped (they run where ../shared is present, as in CI)`,
  );
}

/** Real-world Rego suites (`gatekeeper-library/`, …), kept in `../shared/corpora` like the cases. */
export const corporaDir = path.resolve(repoRoot, "../shared/corpora");
