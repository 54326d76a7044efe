/**
 * MCP (issue 6): Writ in front of MCP servers. `McpUpstreams` is Writ's client side (the servers
 * it fronts), `mcpEndpoint` its server side (`/mcp`, every call through the pipeline).
 */
export {
  APPROVAL_META_KEY,
  ERROR_META_KEY,
  GRANT_META_KEY,
  type McpConfig,
  type McpServerConfig,
  mcpConfigSchema,
  RESULT_META_KEY,
} from "./config.ts";
export { mcpEndpoint } from "./endpoint.ts";
export { upstreamOutput } from "./output.ts";
// Types only: the MCP client SDK loads when mcp.servers names an upstream (server.ts imports it then).
export type { McpUpstreams, McpUpstreamsOptions, UpstreamStatus } from "./upstream.ts";
