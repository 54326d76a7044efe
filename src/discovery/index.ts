/**
 * Tool discovery (`tools/list`, `GET /v1/tools`): not a stage of a call, but the same policy
 * asked with `context.phase = "discover"`, through the decide stage's one input builder.
 */
import type { ToolContract } from "../contracts/index.ts";
import { jsonDigest } from "../core/digest.ts";
import type { Gateway } from "../core/gateway.ts";
import type { Subject } from "../core/types.ts";
import { canonicalAction } from "../normalize/index.ts";
import { policyInput } from "../pipeline/05-decide.ts";
import { PolicyFailure } from "../policy/index.ts";

export interface DiscoveredTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  contract: {
    name: string;
    version: string;
    side_effect: ToolContract["side_effect"];
    idempotency: ToolContract["idempotency"];
  };
}

/**
 * Tool discovery: the decision policy runs with `context.phase = "discover"` for each contract,
 * and only tools it does not deny are listed, in the registry's stable order. Results are cached
 * per authorization context (subject, tenant, roles, scopes, policy revision, family), never
 * shared across subjects.
 */
export class ToolDiscovery {
  private readonly cache = new Map<string, DiscoveredTool[]>();

  constructor(private readonly gw: Gateway) {}

  list(subject: Subject, family: "default" | "openai" | "anthropic" | "mcp"): DiscoveredTool[] {
    const revision = this.gw.policy.revision ?? "none";
    const key = JSON.stringify([
      subject.id,
      subject.tenant,
      [...subject.roles].sort(),
      [...subject.scopes].sort(),
      revision,
      family,
      this.gw.mcp?.catalogVersion ?? 0,
    ]);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const tools: DiscoveredTool[] = [];
    for (const contract of this.gw.contracts.list()) {
      // A tool on an MCP server is listed only while that server offers it.
      const backend = contract.backend;
      if (backend.kind === "mcp" && !this.gw.mcp?.offers(backend.server, backend.tool)) continue;
      const action = canonicalAction(contract, {}, jsonDigest({}));
      const resource = { type: contract.resource?.type ?? "none", id: "", known: false, attributes: {} };
      const input = policyInput(subject, action, resource, {
        requestId: "discovery",
        source: family === "default" ? "canonical" : family,
        phase: "discover",
      });
      // Fail closed: a tool the policy cannot decide about is not listed (nor counted as a failure).
      let allowed = false;
      try {
        allowed = this.gw.policy.evaluate(input).decision.decision !== "deny";
      } catch (error) {
        if (!(error instanceof PolicyFailure)) throw error;
      }
      if (!allowed) continue;
      const view = this.gw.contracts.modelView(contract, family);
      tools.push({
        name: view.name,
        description: view.description,
        input_schema: view.input_schema,
        contract: {
          name: contract.name,
          version: contract.version,
          side_effect: contract.side_effect,
          idempotency: contract.idempotency,
        },
      });
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(key, tools);
    return tools;
  }
}
