/**
 * The configuration and policy that put Writ in front of the conformance suite's reference server
 * (test/support/mcp-conformance-server.ts): one contract per reference tool on the `conformance`
 * server, shown to MCP clients under the suite's own tool names with the server's own schemas,
 * no side effects, and one per resource (template) and prompt of it; and a policy that lets the suite's subject see and call them, and
 * be asked the server's requests to the client (and nothing else), and nobody else do anything.
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CONFORMANCE_TOOLS } from "../support/mcp-conformance-server.ts";

/** The MCP server's name in Writ's configuration. */
export const CONFORMANCE_SERVER = "conformance";
/** The subject the suite's requests carry a token for. */
export const CONFORMANCE_SUBJECT = "conformance-suite";

export const CONFORMANCE_POLICY = `package writ

import rego.v1

default decision := {"decision": "deny", "reasons": [{"code": "no_rule_allows", "message": "no policy rule allows this action", "visible_to_model": true}]}

decision := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}} if {
	startswith(input.action.name, "${CONFORMANCE_SERVER}.")
	input.subject.id == "${CONFORMANCE_SUBJECT}"
}

# The server's requests to the caller while one of its tools runs (sampling, elicitation, roots).
decision := {"decision": "allow", "reasons": []} if {
	input.action.name in {"mcp.sampling", "mcp.elicitation", "mcp.roots"}
	input.action.args.server == "${CONFORMANCE_SERVER}"
	input.subject.id == "${CONFORMANCE_SUBJECT}"
}
`;

export const CONFORMANCE_CONTRACTS = CONFORMANCE_TOOLS.map((tool) => ({
  name: `${CONFORMANCE_SERVER}.${tool.name}`,
  version: "1",
  description: tool.description,
  input_schema: tool.inputSchema,
  side_effect: "none",
  idempotency: "natural",
  backend: { kind: "mcp", server: CONFORMANCE_SERVER, tool: tool.name },
  model_views: [{ family: "mcp", name: tool.name }],
}));

/** The reference server's resources (exact URIs and its one template), one contract each. */
const CONFORMANCE_RESOURCES: Record<string, string> = {
  "static-text": "test://static-text",
  "static-binary": "test://static-binary",
  "watched-resource": "test://watched-resource",
  template: "test://template/{id}/data",
};

/** The reference server's prompts. */
const CONFORMANCE_PROMPTS = [
  "test_simple_prompt",
  "test_prompt_with_arguments",
  "test_prompt_with_embedded_resource",
  "test_prompt_with_image",
];

export const CONFORMANCE_RESOURCE_CONTRACTS = [
  ...Object.entries(CONFORMANCE_RESOURCES).map(([name, uri]) => ({
    name: `${CONFORMANCE_SERVER}.resources.${name}`,
    version: "1",
    description: `Reads ${uri}`,
    input_schema: { type: "object", properties: { uri: { type: "string" } }, required: ["uri"] },
    side_effect: "none",
    idempotency: "natural",
    backend: { kind: "mcp_resource", server: CONFORMANCE_SERVER, uri },
  })),
  ...CONFORMANCE_PROMPTS.map((prompt) => ({
    name: `${CONFORMANCE_SERVER}.prompts.${prompt}`,
    version: "1",
    description: `The prompt ${prompt}`,
    input_schema: { type: "object", additionalProperties: { type: "string" } },
    side_effect: "none",
    idempotency: "natural",
    backend: { kind: "mcp_prompt", server: CONFORMANCE_SERVER, prompt },
  })),
];

/** A folder holding the conformance policy (writ/decision.rego). */
export async function conformancePolicyDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "writ-mcp-conformance-policy-"));
  await mkdir(path.join(dir, "writ"));
  await writeFile(path.join(dir, "writ", "decision.rego"), CONFORMANCE_POLICY);
  return dir;
}

/** A `configure` hook for startTestGateway: the contracts, the server, the policy. */
export function withConformanceServer(server: Record<string, unknown>, policyDir: string) {
  return (document: Record<string, unknown>): Record<string, unknown> => {
    const tools = Array.isArray(document.tools) ? document.tools : [];
    const policy = typeof document.policy === "object" && document.policy !== null ? document.policy : {};
    return {
      ...document,
      tools: [...tools, ...CONFORMANCE_CONTRACTS, ...CONFORMANCE_RESOURCE_CONTRACTS],
      mcp: { servers: [{ name: CONFORMANCE_SERVER, ...server }] },
      policy: { ...policy, dir: policyDir },
    };
  };
}
