/**
 * The methods Writ's `/mcp` answers through an SDK server, one module each (or each family:
 * resources/*, prompts/*), each registering the same handler on both revisions' servers: the v1
 * SDK's per-POST server for 2025-11-25 (`legacy`), the v2 SDK's per-request server for 2026-07-28
 * (`modern`). `initialize`, `ping`, `logging/setLevel` and `server/discover` are the SDK servers'
 * own (initialize.ts gives their capabilities and instructions). fast-path.ts answers a plain
 * 2025-11-25 `tools/call` or `tools/list` with the same handlers (`callTool`, `listTools`).
 */
import { completion } from "./completion.ts";
import type { MethodRegistration } from "./context.ts";
import { notifications } from "./notifications.ts";
import { prompts } from "./prompts.ts";
import { resources } from "./resources.ts";
import { subscribe } from "./subscribe.ts";
import { toolsCall } from "./tools-call.ts";
import { toolsList } from "./tools-list.ts";

export type { MethodRegistration, PostContext, ServerPost, SessionContext } from "./context.ts";
export { carries } from "./notifications.ts";
export { callTool, callToolModern } from "./tools-call.ts";
export { listTools } from "./tools-list.ts";

export const METHODS: readonly MethodRegistration[] = [
  toolsList,
  toolsCall,
  resources,
  subscribe,
  prompts,
  completion,
  notifications,
];
