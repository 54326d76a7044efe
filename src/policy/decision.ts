/** The policy's answer checked before the pipeline trusts it (DESIGN section 4). */
import { conditionSchema, type PolicyDecision, policyDecisionSchema } from "../core/types.ts";
import { PolicyFailure } from "./errors.ts";

/** The policy's answer as a PolicyDecision, or a PolicyFailure saying what is wrong with it. */
export function validateDecision(value: unknown, entrypoint: string): PolicyDecision {
  const parsed = policyDecisionSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((i) => `${i.path.join(".") || "(decision)"}: ${i.message}`)
      .join("; ");
    throw new PolicyFailure("policy_malformed", `${entrypoint} returned a malformed decision: ${problems}`);
  }
  const conditions = [];
  for (const [i, c] of parsed.data.conditions.entries()) {
    const condition = conditionSchema.safeParse(c);
    if (!condition.success) {
      throw new PolicyFailure(
        "policy_malformed",
        `${entrypoint} returned condition ${i} that Writ cannot enforce: ${JSON.stringify(c)}`,
      );
    }
    conditions.push(condition.data);
  }
  const d = parsed.data;
  if (d.decision === "allow_with_conditions" && conditions.length === 0) {
    throw new PolicyFailure(
      "policy_malformed",
      `${entrypoint} returned allow_with_conditions without conditions`,
    );
  }
  if (d.decision === "allow" && conditions.length > 0) {
    throw new PolicyFailure(
      "policy_malformed",
      `${entrypoint} returned allow with conditions: use allow_with_conditions`,
    );
  }
  if (d.decision === "require_approval" && !d.approval) {
    throw new PolicyFailure(
      "policy_malformed",
      `${entrypoint} returned require_approval without approval.approver_roles`,
    );
  }
  if (d.required_scopes !== undefined && d.decision !== "deny") {
    throw new PolicyFailure(
      "policy_malformed",
      `${entrypoint} returned required_scopes with ${d.decision}: only a denial challenges for scopes`,
    );
  }
  return { ...d, conditions };
}
