/** Policy inputs for the engine's tests: a call to `action` by alice, parts replaced as given. */
import type { PolicyInput } from "../../src/core/types.ts";

export function policyInputFor(
  action: string,
  parts: { subject?: Partial<PolicyInput["subject"]>; args?: Record<string, unknown> } & Partial<
    Pick<PolicyInput, "resource" | "context">
  > = {},
): PolicyInput {
  return {
    subject: { id: "alice", tenant: "t1", roles: [], scopes: [], issuer: "i", claims: {}, ...parts.subject },
    action: {
      name: action,
      version: "1",
      side_effect: "none",
      idempotency: "natural",
      data_classification: "internal",
      args: parts.args ?? {},
      args_digest: "0",
    },
    resource: parts.resource ?? { type: "none", id: "", known: false, attributes: {} },
    context: parts.context ?? { time_ns: 0, request_id: "r", source: "canonical", phase: "call" },
  };
}
