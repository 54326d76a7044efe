/**
 * Explaining a logged decision (issue 19): its stored input is evaluated once more against the
 * archived revision it names, built instrumented (`rego/explain.ts`), never the live engine. The
 * answer says which rules produced the result and which body expressions held on the way, with
 * their lines and values, and whether the explanation can be trusted to match what was decided:
 * a redacted input (erased or masked pointers) or a result that differs is said so.
 */
import { canonicalJson } from "../core/digest.ts";
import { WritError } from "../core/errors.ts";
// Not through rego/index.ts, which would load the compiler (and binaryen) at start.
import { explainEvaluation } from "../rego/explain.ts";
import type { Explanation } from "../rego/trace.ts";
import type { DecisionLogEntry, PolicyRevisionRecord } from "../store/types.ts";
import { validateDecision } from "./decision.ts";
import { revisionDocument } from "./revisions.ts";
import { dataOfFiles, splitPolicyFiles } from "./sources.ts";

export interface DecisionExplanation {
  decision_id: string;
  path: string;
  revision: string;
  decision: string;
  /** JSON Pointers of the stored input that were erased or masked before it was logged. */
  erased: string[];
  masked: string[];
  /** Whether re-evaluating the stored input gave the result the entry logged. */
  same_result: boolean;
  /** What to keep in mind reading it (a redacted input, a differing result). */
  notes: string[];
  explanation: Explanation;
}

/** Whether the policy decided the entry: only its evaluations carry the evaluation's timer. */
function evaluated(entry: DecisionLogEntry): boolean {
  return entry.metrics.timer_rego_query_eval_ns !== undefined && entry.input !== undefined;
}

/**
 * Explains `entry` with `record`, the archived revision it names (undefined when it was never
 * archived). A shadow policy's entry (`writ/shadow`) is explained on the input of the live
 * decision it names: pass that entry as `inputFrom`. Throws WritError when it cannot be
 * explained, saying why.
 */
export async function explainDecision(
  entry: DecisionLogEntry,
  record: PolicyRevisionRecord | undefined,
  inputFrom: DecisionLogEntry = entry,
): Promise<DecisionExplanation> {
  const revision = entry.bundles.writ.revision;
  if (!evaluated(inputFrom)) {
    throw new WritError(
      "invalid_argument",
      `decision ${entry.decision_id} (${entry.path}) was not decided by a policy`,
      {
        suggestedFix: "explain an entry of a policy decision (path writ/decision, or writ/shadow)",
      },
    );
  }
  if (record === undefined) {
    throw new WritError("not_found", `policy revision ${revision} is not in the archive`, {
      suggestedFix:
        "revisions are archived from the first load after the upgrade that added the archive; decisions of earlier revisions cannot be explained",
    });
  }
  const document = await revisionDocument(record);
  const { rego, data: dataFiles } = splitPolicyFiles(document.files);
  if (rego.length === 0) {
    throw new WritError("not_found", `policy revision ${revision} holds no Rego sources to explain`, {
      suggestedFix:
        "build bundles with their .rego files in them (writ policy build and opa build keep them)",
    });
  }
  const sources = rego.map((f) => ({ file: f.path, source: f.text, regoVersion: f.rego_version }));
  const data = document.kind === "bundle" ? bundleData(document.data) : dataOfFiles(dataFiles, record.origin);
  const explanation = await explainEvaluation(sources, inputFrom.input, { entrypoint: inputFrom.path, data });
  // The log keeps the validated decision (defaults filled in), so the new result is validated too.
  const first = explanation.result[0];
  const value = typeof first === "object" && first !== null ? Reflect.get(first, "result") : undefined;
  let decided: unknown;
  try {
    decided = validateDecision(value, inputFrom.path);
  } catch {
    decided = value;
  }
  const same_result = entry.result !== undefined && canonicalJson(decided) === canonicalJson(entry.result);
  const notes: string[] = [];
  const { erased, masked } = inputFrom;
  if (erased.length > 0 || masked.length > 0) {
    notes.push(
      `the input was redacted before it was logged (erased: ${erased.join(", ") || "none"}; masked: ${masked.join(", ") || "none"}): rules that read those values may have decided otherwise on the original input`,
    );
  }
  if (!same_result) {
    notes.push(
      "re-evaluating the stored input did not give the logged result (a redacted input, the clock, or a policy that failed then): read the explanation as what this input decides now",
    );
  }
  return {
    decision_id: entry.decision_id,
    path: entry.path,
    revision,
    decision: entry.decision,
    erased,
    masked,
    same_result,
    notes,
    explanation,
  };
}

function bundleData(data: unknown): Record<string, unknown> {
  return typeof data === "object" && data !== null && !Array.isArray(data)
    ? Object.fromEntries(Object.entries(data))
    : {};
}
