/**
 * The contracts governing an MCP server's resources and prompts. A resource URI is governed by
 * the contract whose `backend.uri` is exactly that URI, else by the first contract (in registry
 * order) whose `backend.uri` is an RFC 6570 template matching it; a prompt by the first contract
 * naming it. Reads and listings use these same answers, so what a caller sees listed is what the
 * policy is asked about when it reads.
 */
import { UriTemplate, type Variables } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import type { ContractRegistry, ToolContract } from "../contracts/index.ts";

/** Whether a contract is a tool (not a resource or a prompt of an MCP server). */
export function isTool(contract: ToolContract): boolean {
  return contract.backend.kind !== "mcp_resource" && contract.backend.kind !== "mcp_prompt";
}

const templates = new Map<string, UriTemplate | null>();

/** The compiled template (null when `uri` is no template or does not parse), compiled once. */
function templateOf(uri: string): UriTemplate | null {
  let template = templates.get(uri);
  if (template === undefined) {
    try {
      template = UriTemplate.isTemplate(uri) ? new UriTemplate(uri) : null;
    } catch {
      template = null;
    }
    if (templates.size > 10_000) templates.clear();
    templates.set(uri, template);
  }
  return template;
}

/** The variables of `uri` under `template`, or undefined when it does not match. */
function matchTemplate(template: UriTemplate, uri: string): Variables | undefined {
  try {
    return template.match(uri) ?? undefined;
  } catch {
    // The SDK refuses over-long URIs: they match nothing.
    return undefined;
  }
}

/** A contract's match for a URI: the template's variables (none for an exact URI), or undefined. */
export function resourceMatch(contract: ToolContract, uri: string): Variables | undefined {
  const backend = contract.backend;
  if (backend.kind !== "mcp_resource") return undefined;
  if (backend.uri === uri) return {};
  const template = templateOf(backend.uri);
  return template === null ? undefined : matchTemplate(template, uri);
}

export interface GoverningResource {
  contract: ToolContract;
  variables: Variables;
}

/** The contract governing reads of `uri`: exact URIs first, then templates in registry order. */
export function resourceContract(registry: ContractRegistry, uri: string): GoverningResource | undefined {
  const contracts = registry.list();
  const exact = contracts.find((c) => c.backend.kind === "mcp_resource" && c.backend.uri === uri);
  if (exact !== undefined) return { contract: exact, variables: {} };
  for (const contract of contracts) {
    const variables = resourceMatch(contract, uri);
    if (variables !== undefined) return { contract, variables };
  }
  return undefined;
}

/** The contract governing `prompts/get` of `name`: the first in registry order. */
export function promptContract(registry: ContractRegistry, name: string): ToolContract | undefined {
  return registry.list().find((c) => c.backend.kind === "mcp_prompt" && c.backend.prompt === name);
}
