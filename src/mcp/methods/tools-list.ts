/**
 * `tools/list`: the tools the discovery policy lets this caller see, in the registry's stable
 * order, each as its contract's MCP view, and `run_code` when the policy lets the caller run code.
 */
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { DiscoveredTool } from "../../pipeline/index.ts";
import { type ListedTool, runCodeTool } from "../run-code.ts";
import type { MethodRegistration, PostContext } from "./context.ts";

/**
 * The MCP view of a discovered tool; hints follow the contract, not the upstream server. No
 * `outputSchema` is advertised: Writ checks results against the contract's output schema
 * itself, and clients validate `structuredContent` against an advertised schema even on
 * `isError` results, which would hide the structured error the model needs.
 */
function mcpTool(tool: DiscoveredTool): ListedTool {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: { ...tool.input_schema, type: "object" },
    annotations: {
      readOnlyHint: tool.contract.side_effect === "none",
      destructiveHint: tool.contract.side_effect === "committing",
      idempotentHint: tool.contract.idempotency !== "none",
    },
    _meta: { "writ/contract": { name: tool.contract.name, version: tool.contract.version } },
  };
}

/** The tools the caller sees: the discovered ones, and `run_code` when the policy lets it run code. */
export function listTools({ discovery, codeMode, subject }: PostContext): ListedTool[] {
  const tools = discovery.list(subject, "mcp").map(mcpTool);
  return codeMode?.offered(subject, "mcp") ? [...tools, runCodeTool(codeMode, subject)] : tools;
}

export const toolsList: MethodRegistration = {
  legacy: (post) =>
    post.server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listTools(post) })),
  modern: (post) => post.server.setRequestHandler("tools/list", async () => ({ tools: listTools(post) })),
};
