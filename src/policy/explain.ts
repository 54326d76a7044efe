/**
 * Explaining a logged decision (issues 19, 31): its stored input is evaluated once more against
 * the archived revision it names, built instrumented (`rego/explain.ts`), never the live engine.
 * The answer leads with the decision and the chain of rules and expressions that produced it,
 * with the values they saw (redacted as the decision log redacts), then what was tried and did
 * not hold, then the rest; and it says whether it can be trusted to match what was decided: a
 * redacted input (erased or masked pointers) or a result that differs is said so.
 *
 * The instrumented build is kept per revision and entrypoint (a bounded cache, most recently used
 * kept), so only the first explanation of a revision pays for the build.
 */
import { canonicalJson } from "../core/digest.ts";
import { WritError } from "../core/errors.ts";
import { redact } from "../decisionlog/redact.ts";
// Not through rego/index.ts, which would load the compiler (and binaryen) at start.
import { type Explainer, type Explanation, prepareExplainer } from "../rego/explain.ts";
import type { ExplainNode } from "../rego/explain-tree.ts";
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
  /** The answer in one line per reason: `deny ← denials contains … (file:line) ← line N …`. */
  summary: string[];
  explanation: Explanation;
}

/** Instrumented builds kept, by revision and entrypoint: each is a compiled module in memory. */
const CACHED_BUILDS = 8;
const explainers = new Map<string, Promise<Explainer>>();

/** The explainer of a revision's sources, built once while it stays among the recently used. */
function explainerOf(key: string, build: () => Promise<Explainer>): Promise<Explainer> {
  let explainer = explainers.get(key);
  if (explainer) explainers.delete(key);
  else {
    explainer = build();
    // A build that failed is not kept: the next request says why again.
    explainer.catch(() => explainers.delete(key));
  }
  explainers.set(key, explainer);
  while (explainers.size > CACHED_BUILDS) {
    const oldest = explainers.keys().next().value;
    if (oldest === undefined) break;
    explainers.delete(oldest);
  }
  return explainer;
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
  const explainer = await explainerOf(`${revision}\n${inputFrom.path}`, () =>
    prepareExplainer(sources, { entrypoint: inputFrom.path, data }),
  );
  const explanation = redactExplanation(explainer.explain(inputFrom.input));
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
    summary: explanation.tree.chains.map((chain) => `${entry.decision} ← ${chain}`),
    explanation,
  };
}

/**
 * The values shown are derived from the stored input, which the log already redacted; they pass
 * through the log's secret detectors again, so that nothing the policy computes from data or
 * from parts of the input (a decoded string, a concatenation) shows a credential the log would not.
 */
function redactExplanation(e: Explanation): Explanation {
  const node = (n: ExplainNode): ExplainNode => ({
    ...n,
    steps: n.steps.map((s) => ({
      ...s,
      values: s.values.map((v) => ({
        term: v.term,
        value: redact(v.value, { eraseClassifications: [] }).input,
      })),
      because: s.because.map(node),
    })),
  });
  const t = e.tree;
  const result = redact(e.result, { eraseClassifications: [] }).input;
  return {
    result: Array.isArray(result) ? result : [],
    tree: {
      ...t,
      answer: t.answer && node(t.answer),
      tried: t.tried.map(node),
      rest: t.rest.map(node),
    },
  };
}

/** A shown value as compact JSON on one line, cut at `max` characters (the JSON format has it whole). */
export function valueLine(value: unknown, max: number): string {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function bundleData(data: unknown): Record<string, unknown> {
  return typeof data === "object" && data !== null && !Array.isArray(data)
    ? Object.fromEntries(Object.entries(data))
    : {};
}
