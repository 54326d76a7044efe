/** `writ logs explain <id>`: why the policy decided a logged decision as it did. */
import { WritError } from "../../core/errors.ts";
import { shadowedDecisionId } from "../../decisionlog/index.ts";
import { type DecisionExplanation, explainDecision, valueLine } from "../../policy/explain.ts";
import type { ExplainNode } from "../../rego/explain-tree.ts";
import { EXIT, oneDecisionFlags, withLog } from "./common.ts";
import type { CommandIo } from "./io.ts";

export const explainUsage = `usage: writ logs explain [--config f] [--format text|json] <decision-id>

Explains one decision: its stored input is evaluated again against the archived policy revision
the entry names, built instrumented (never the live policy). It leads with the answer: the
decision and the chain of rules that produced it, as a tree of the rules and body expressions
that held (file:line, the source line, the values of their refs, calls and variables, redacted
as the log redacts); then the rules tried that did not hold (earlier else branches, denials
checked), each with the expression that failed; then the other rules that produced values. A shadow policy's entry
(writ/shadow) is explained on the input of the live decision it names. When the stored input was
redacted, or the result differs from the logged one, it says so. Exit code 1 when the decision
or its revision is not found or it was not decided by a policy.`;

export async function explainCommand(argv: string[], io: CommandIo): Promise<number> {
  const flags = await oneDecisionFlags(argv, io, explainUsage);
  if (typeof flags === "number") return flags;
  const { config, format, id } = flags;
  return withLog(config, async ({ log, store }) => {
    const entry = await log.get(id);
    if (entry === undefined) {
      io.err(`writ logs explain: no decision ${id}\n  next: find its id with writ logs query`);
      return EXIT.failed;
    }
    const liveId = shadowedDecisionId(entry);
    const live = liveId === undefined ? undefined : await log.get(liveId);
    let explained: DecisionExplanation;
    try {
      explained = await explainDecision(
        entry,
        await store.getPolicyRevision(entry.bundles.writ.revision),
        live,
      );
    } catch (error) {
      if (!(error instanceof WritError)) throw error;
      io.err(`writ logs explain: ${error.message}\n  next: ${error.suggestedFix}`);
      return EXIT.failed;
    }
    await io.out(format === "json" ? JSON.stringify(explained, null, 2) : explanationReport(explained));
    return EXIT.ok;
  });
}

/** The explanation as text: the answer first, as a tree with its values; then what was tried; then the rest. */
export function explanationReport(e: DecisionExplanation): string {
  const lines = [`decision ${e.decision_id} (${e.path}, policy revision ${e.revision}): ${e.decision}`];
  lines.push(
    e.same_result
      ? "re-evaluated: the same result as logged"
      : "re-evaluated: a different result than logged",
  );
  for (const note of e.notes) lines.push(`note: ${note}`);
  const { tree } = e.explanation;
  lines.push("");
  if (tree.decided_by === "undefined") lines.push(`why: no rule of ${e.path} produced a value`);
  for (const chain of e.summary) lines.push(`why: ${chain}`);
  if (tree.answer) {
    lines.push("", tree.decided_by === "default" ? "decided by the default rule:" : "the rule that decided:");
    nodeLines(tree.answer, "  ", lines);
  }
  if (tree.tried.length > 0) {
    lines.push(
      "",
      tree.decided_by === "default"
        ? "rules tried that did not hold (so the default applied):"
        : "tried first, did not hold:",
    );
    for (const node of tree.tried) nodeLines(node, "  ", lines);
  }
  if (tree.rest.length > 0) {
    lines.push("", `other rules that produced values (${tree.rest.length}; --format json has their values):`);
    for (const node of tree.rest) lines.push(`  ${node.file}:${node.line}  ${node.head}`);
  }
  return lines.join("\n");
}

/** A rule, its expressions (✓ held, ✗ did not) with their values, each with the rules it read. */
function nodeLines(node: ExplainNode, indent: string, lines: string[], nested = false): void {
  const mark = `${nested ? "← " : ""}${node.held ? "" : "✗ "}${node.default ? "default " : ""}`;
  lines.push(`${indent}${mark}${node.head}   ${node.file}:${node.line}`);
  for (const step of node.steps) {
    lines.push(`${indent}  ${step.held ? "✓" : "✗"} ${step.line}  ${step.text}`);
    for (const v of step.values) lines.push(`${indent}        ${v.term} = ${valueLine(v.value, 160)}`);
    for (const rule of step.because) nodeLines(rule, `${indent}      `, lines, true);
  }
}
