/**
 * MCP (issue 6): Writ's MCP endpoint (`/mcp`, every call through the pipeline). Writ's client
 * side, the upstream servers it fronts, is a dispatch backend: src/dispatch/mcp/.
 */
export {
  APPROVAL_META_KEY,
  ERROR_META_KEY,
  type McpConfig,
  mcpConfigSchema,
  RESULT_META_KEY,
} from "./config.ts";
export { mcpEndpoint } from "./endpoint.ts";
