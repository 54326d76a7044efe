/**
 * The methods Writ's `/mcp` answers through the per-POST SDK server, one module each (or each
 * family: resources/*, prompts/*); `initialize`, `ping` and `logging/setLevel` are the SDK
 * server's own (initialize.ts gives its capabilities and instructions). fast-path.ts answers a
 * plain `tools/call` or `tools/list` with the same handlers (`callTool`, `listTools`).
 */
import type { MethodRegistration } from "./context.ts";
import { notifications } from "./notifications.ts";
import { prompts } from "./prompts.ts";
import { resources } from "./resources.ts";
import { toolsCall } from "./tools-call.ts";
import { toolsList } from "./tools-list.ts";

export type { MethodRegistration, PostContext, ServerPost } from "./context.ts";
export { carries } from "./notifications.ts";
export { callTool } from "./tools-call.ts";
export { listTools } from "./tools-list.ts";

export const METHODS: readonly MethodRegistration[] = [
  toolsList,
  toolsCall,
  resources,
  prompts,
  notifications,
];
