/**
 * Writ's identity on `/mcp`, the same on both revisions: its name, the capabilities it offers,
 * the instructions. On 2025-11-25 the per-POST SDK server answers `initialize` (and `ping`,
 * `logging/setLevel`) with them (`newServer`, the v1 SDK's `Server`); on 2026-07-28 the v2 SDK's
 * `Server` (`newModernServer`) answers `server/discover` with them, and stamps its name on every
 * result.
 */

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { Server as ModernServer, type Transport } from "@modelcontextprotocol/server";
import { AjvJsonSchemaValidator as ModernAjvValidator } from "@modelcontextprotocol/server/validators/ajv";
import { errorWithData } from "./messages.ts";
import { withoutTaskContent } from "./tasks.ts";

/** Writ's MCP identity (`serverInfo`; on 2026-07-28 stamped on every result's `_meta`). */
export const SERVER_INFO = { name: "writ", version: "0.1.0" };
const CAPABILITIES = {
  tools: { listChanged: false },
  resources: {},
  prompts: {},
  logging: {},
  completions: {},
};
/**
 * 2026-07-28's: the lists' changes and the updates of the resources a caller subscribes to (the
 * listen filter's `resourceSubscriptions`) are relayed on `subscriptions/listen` (listen.ts). On
 * 2025-11-25 only with sessions on: the stateless endpoint keeps no stream to send them on.
 */
const MODERN_CAPABILITIES = {
  ...CAPABILITIES,
  tools: { listChanged: true },
  resources: { listChanged: true, subscribe: true },
  prompts: { listChanged: true },
};
/**
 * The JSON Schema validator every per-POST server shares. The SDK would otherwise build a new Ajv
 * (its meta-schemas and formats) for each POST, the largest part of a server's construction; the
 * server uses it for elicitation answers only, which Writ's own handlers never ask for (an upstream's
 * elicitation is forwarded as the caller wrote it: server-requests.ts).
 */
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();
const MODERN_SCHEMA_VALIDATOR = new ModernAjvValidator();
const INSTRUCTIONS =
  'Writ authorizes every tool call against policy. A refused call answers with isError and a structured error (category, message, suggested_fix): follow the fix. A call that needs approval answers approval_required with an approval id; once it is approved, call the same tool with the same arguments and _meta {"writ/approval": "<id>"}.';

/**
 * 2025-11-25's with sessions on (sessions.ts): a session's GET stream carries the list changes
 * and the updates of the resources it subscribed.
 */
const SESSION_CAPABILITIES = MODERN_CAPABILITIES;

/** A 2025-11-25 POST's server, before its methods are registered (methods/index.ts). */
export function newServer(sessions = false): Server {
  return new Server(SERVER_INFO, {
    capabilities: sessions ? SESSION_CAPABILITIES : CAPABILITIES,
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: SCHEMA_VALIDATOR,
  });
}

/**
 * The cache hints of the 2026-07-28 revision's cacheable results: every list is the caller's own
 * (filtered by the discovery policy) and a read went through the caller's decision, so none may
 * be shared or kept (`private`, 0 ms); `server/discover` is the same for every caller but is
 * behind the caller's token too.
 */
const PRIVATE = { ttlMs: 0, cacheScope: "private" } as const;
const CACHE_HINTS = {
  "tools/list": PRIVATE,
  "prompts/list": PRIVATE,
  "resources/list": PRIVATE,
  "resources/templates/list": PRIVATE,
  "resources/read": PRIVATE,
  "server/discover": PRIVATE,
};

/**
 * The v2 SDK's server for one 2026-07-28 request: every message it sends leaves with Writ's
 * error as `data` of a JSON-RPC error the SDK answered by itself (an unknown method, invalid
 * params), as the 2025-11-25 server's do (sdk-server.ts), and a task (tasks.ts) as the tasks
 * extension has it.
 */
class WritModernServer extends ModernServer {
  override async connect(transport: Transport): Promise<void> {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => send(withoutTaskContent(errorWithData(message)), options);
    await super.connect(transport);
  }
}

/** A 2026-07-28 request's server, before its methods are registered (methods/index.ts). */
export function newModernServer(): ModernServer {
  return new WritModernServer(SERVER_INFO, {
    capabilities: MODERN_CAPABILITIES,
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: MODERN_SCHEMA_VALIDATOR,
    cacheHints: CACHE_HINTS,
  });
}
