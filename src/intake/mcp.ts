/**
 * MCP messages that propose a call (MCP 2025-11-25), each a JSON-RPC 2.0 request:
 * - `tools/call` `{name, arguments?, _meta?, task?}`: a tool call; missing arguments are `{}`;
 * - `resources/read` `{uri, _meta?}`: a read of the resource at `uri` (normalization finds the
 *   contract governing the URI; the arguments become `{uri, ...the template's variables}`);
 * - `prompts/get` `{name, arguments?, _meta?}`: a prompt, its arguments (strings) as the call's.
 * On 2026-07-28 each may be the retry of a multi-round-trip request, carrying `inputResponses`
 * and `requestState` (what they mean is the MCP endpoint's: src/mcp/approval-flow.ts).
 * The call id is the request id as a string.
 */
import { z } from "zod";
import type { ProposedCall } from "../core/types.ts";
import type { ProposalAdapter } from "./lib/adapter.ts";
import { readArgumentsObject } from "./lib/arguments.ts";
import type { Problems } from "./lib/problems.ts";

const metaSchema = z.record(z.string(), z.unknown()).optional();

/** A 2026-07-28 retry's fields (the call is the same; the endpoint reads them). */
const roundFields = {
  inputResponses: z.record(z.string(), z.unknown()).optional(),
  requestState: z.string().optional(),
};

const requestSchema = z.strictObject({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number()]),
  method: z.string(),
  params: z.unknown(),
});

const callToolParamsSchema = z.strictObject({
  name: z.string().min(1),
  arguments: z.unknown().optional(),
  _meta: metaSchema,
  task: z.strictObject({ ttl: z.number().optional() }).optional(),
  ...roundFields,
});

const readResourceParamsSchema = z.strictObject({
  uri: z.string().min(1),
  _meta: metaSchema,
  ...roundFields,
});

const getPromptParamsSchema = z.strictObject({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.string()).optional(),
  _meta: metaSchema,
  ...roundFields,
});

/** The methods that propose a call, and how each becomes one. */
const methods: Record<string, (params: unknown, callId: string, problems: Problems) => ProposedCall[]> = {
  "tools/call": (raw, callId, problems) => {
    const params = problems.parse(callToolParamsSchema, raw, "/params");
    if (params === undefined) return [];
    const args = readArgumentsObject(params.arguments ?? {}, "/params/arguments", problems);
    if (args === undefined) return [];
    return [{ callId, tool: params.name, arguments: args, source: "mcp", pointer: "/params" }];
  },
  "resources/read": (raw, callId, problems) => {
    const params = problems.parse(readResourceParamsSchema, raw, "/params");
    if (params === undefined) return [];
    const args = { uri: params.uri };
    return [
      { callId, tool: params.uri, arguments: args, source: "mcp", pointer: "/params", mcp: "resource" },
    ];
  },
  "prompts/get": (raw, callId, problems) => {
    const params = problems.parse(getPromptParamsSchema, raw, "/params");
    if (params === undefined) return [];
    const args = readArgumentsObject(params.arguments ?? {}, "/params/arguments", problems);
    if (args === undefined) return [];
    return [{ callId, tool: params.name, arguments: args, source: "mcp", pointer: "/params", mcp: "prompt" }];
  },
};

export const mcpAdapter: ProposalAdapter = {
  format: "mcp",
  shapes:
    'a JSON-RPC 2.0 request {jsonrpc: "2.0", id, method: "tools/call", params: {name, arguments}} (or resources/read {uri}, prompts/get {name, arguments})',
  fix: 'Send the MCP request as the client sent it: {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "…", "arguments": {…}}}.',
  read(payload, problems) {
    const request = problems.parse(requestSchema, payload, "");
    if (request === undefined) return [];
    const read = Object.hasOwn(methods, request.method) ? methods[request.method] : undefined;
    if (read === undefined) {
      problems.add(
        "/method",
        `method must be "tools/call", "resources/read" or "prompts/get", got ${JSON.stringify(request.method)}; Writ authorizes calls (the lists go to discovery)`,
      );
      return [];
    }
    return read(request.params, String(request.id), problems);
  },
};
