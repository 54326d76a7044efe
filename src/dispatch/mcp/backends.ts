/**
 * The MCP backend kinds: a tool (`mcp`), a resource (`mcp_resource`) or a prompt (`mcp_prompt`) on
 * an upstream MCP server, sent through `McpUpstreams` (upstream.ts) with the grant in `_meta`, the
 * answer made a backend output (output.ts).
 */
import type { ToolContract } from "../../contracts/schema.ts";
import { WritError } from "../../core/errors.ts";
import { resourceMatch } from "../../normalize/index.ts";
import type { Backend, BackendDeps } from "../backend.ts";
import { promptOutput, resourceOutput, upstreamOutput } from "./output.ts";
import type { UpstreamMcpServers } from "./servers.ts";

export const mcpToolBackend: Backend<"mcp"> = {
  prepare(deps, { contract, backend, grant, requestId, observer }) {
    const mcp = upstreams(deps, contract, backend.server);
    return async (args) => {
      const answer = await mcp.call(contract, args, grant, requestId, observer);
      return upstreamOutput(contract, backend.server, answer);
    };
  },
};

export const mcpResourceBackend: Backend<"mcp_resource"> = {
  prepare(deps, { contract, backend, grant, requestId }) {
    const mcp = upstreams(deps, contract, backend.server);
    return async (args) => {
      const uri = args.uri;
      if (typeof uri !== "string" || resourceMatch(contract, uri) === undefined) {
        throw notSent(contract, `arguments.uri is no URI matching ${backend.uri}`);
      }
      const answer = await mcp.readResource(contract, uri, grant, requestId);
      return resourceOutput(contract, backend.server, answer);
    };
  },
};

export const mcpPromptBackend: Backend<"mcp_prompt"> = {
  prepare(deps, { contract, backend, grant, requestId }) {
    const mcp = upstreams(deps, contract, backend.server);
    return async (args) => {
      const strings: Record<string, string> = {};
      for (const [name, value] of Object.entries(args)) {
        if (typeof value !== "string")
          throw notSent(contract, `the prompt's argument ${name} is not a string`);
        strings[name] = value;
      }
      const answer = await mcp.getPrompt(contract, backend.prompt, strings, grant, requestId);
      return promptOutput(contract, backend.server, answer);
    };
  },
};

/** The upstream MCP servers, for a call to `server`, one of them. */
function upstreams(deps: BackendDeps, contract: ToolContract, server: string): UpstreamMcpServers {
  if (deps.mcp) return deps.mcp;
  throw new WritError(
    "backend_unavailable",
    `${contract.name} runs on an MCP server, and none is configured`,
    {
      suggestedFix: `configure the MCP server ${server} under mcp.servers`,
      retryable: false,
      effectCommitted: false,
    },
  );
}

/** The final arguments (after the conditions' overrides) do not fit the MCP request. */
function notSent(contract: ToolContract, why: string): WritError {
  return new WritError("invalid_argument", `${contract.name} was not sent: ${why}`, {
    fieldErrors: [{ path: "/arguments", message: why }],
    suggestedFix:
      "propose the call again with arguments its contract's input schema and backend accept; if a condition overrode them, tell the policy's author",
    retryable: false,
    effectCommitted: false,
  });
}
