/**
 * MCP `tools/call`: a JSON-RPC 2.0 request `{jsonrpc: "2.0", id, method: "tools/call", params:
 * {name, arguments?, _meta?, task?}}` (MCP 2025-11-25 `CallToolRequest`). The call id is the
 * request id as a string; missing arguments are an empty object.
 */
import { z } from "zod";
import type { ProposalAdapter } from "./lib/adapter.ts";
import { readArgumentsObject } from "./lib/arguments.ts";

const callToolRequestSchema = z.strictObject({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number()]),
  method: z.string(),
  params: z.strictObject({
    name: z.string().min(1),
    arguments: z.unknown().optional(),
    _meta: z.record(z.string(), z.unknown()).optional(),
    task: z.strictObject({ ttl: z.number().optional() }).optional(),
  }),
});

export const mcpAdapter: ProposalAdapter = {
  format: "mcp",
  shapes: 'a JSON-RPC 2.0 request {jsonrpc: "2.0", id, method: "tools/call", params: {name, arguments}}',
  fix: 'Send the MCP tools/call request as the client sent it: {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "…", "arguments": {…}}}.',
  read(payload, problems) {
    const request = problems.parse(callToolRequestSchema, payload, "");
    if (request === undefined) return [];
    if (request.method !== "tools/call") {
      problems.add(
        "/method",
        `method must be "tools/call", got ${JSON.stringify(request.method)}; Writ authorizes tool calls (tools/list goes to tool discovery)`,
      );
      return [];
    }
    const args = readArgumentsObject(request.params.arguments ?? {}, "/params/arguments", problems);
    if (args === undefined) return [];
    return [
      {
        callId: String(request.id),
        tool: request.params.name,
        arguments: args,
        source: "mcp",
        pointer: "/params",
      },
    ];
  },
};
