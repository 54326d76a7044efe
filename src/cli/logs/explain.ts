/** `writ logs explain <id>`: why the policy decided a logged decision as it did. */
import { WritError } from "../../core/errors.ts";
import { shadowedDecisionId } from "../../decisionlog/index.ts";
import { type DecisionExplanation, explainDecision } from "../../policy/explain.ts";
import { EXIT, oneDecisionFlags, withLog } from "./common.ts";
import type { CommandIo } from "./io.ts";

export const explainUsage = `usage: writ logs explain [--config f] [--format text|json] <decision-id>

Explains one decision: its stored input is evaluated again against the archived policy revision
the entry names, built instrumented (never the live policy), and the rules that produced the
result are printed in the order they did, each with the body expressions that held on the way
(file:line, the source line, the values their variables were bound to). A shadow policy's entry
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

/** The explanation as text: what was decided, what to keep in mind, then each rule and why it held. */
export function explanationReport(e: DecisionExplanation): string {
  const lines = [`decision ${e.decision_id} (${e.path}, policy revision ${e.revision}): ${e.decision}`];
  lines.push(
    e.same_result
      ? "re-evaluated: the same result as logged"
      : "re-evaluated: a different result than logged",
  );
  for (const note of e.notes) lines.push(`note: ${note}`);
  lines.push("", "rules that produced values, in the order they did:");
  for (const rule of e.explanation.rules) {
    lines.push(`  ${rule.file}:${rule.line}  ${rule.default ? "default " : ""}${rule.rule}`);
    lines.push(`      ${rule.text}`);
    for (const step of rule.because) {
      const bound = Object.entries(step.bindings).map(
        ([name, value]) => `${name} = ${JSON.stringify(value)}`,
      );
      lines.push(`    ${step.line}: ${step.text}${bound.length > 0 ? `   (${bound.join(", ")})` : ""}`);
    }
  }
  return lines.join("\n");
}
