/**
 * Stage 8, the decision log: every decision is appended, durable before the answer (and any
 * grant) leaves Writ. It runs before dispatch so that no grant exists without its entry.
 */
import type { Gateway } from "../core/gateway.ts";
import type { DecisionParts, LoggedDecision } from "../decisionlog/index.ts";

/** The policy revision a refusal is logged under: the one loaded now. */
export function currentRevision(gw: Pick<Gateway, "policy">): string {
  return gw.policy.revision ?? "none";
}

/** Appends one decision. */
export function logDecision(gw: Pick<Gateway, "log">, parts: DecisionParts): Promise<LoggedDecision> {
  return gw.log.append(parts);
}

/** Appends a refusal of a whole request (or of one of its calls) and counts it as an error decision. */
export async function logRequestRefusal(
  gw: Pick<Gateway, "log" | "metrics">,
  parts: DecisionParts,
): Promise<void> {
  await gw.log.append(parts);
  gw.metrics.decisions.inc({ decision: "error" });
}
