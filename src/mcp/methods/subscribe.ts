/**
 * `resources/subscribe` and `resources/unsubscribe` (2025-11-25, with sessions on: sessions.ts):
 * kept with the caller's session, whose GET stream then relays the resource's
 * `notifications/resources/updated` (session-streams.ts). Subscribing is allowed when the caller
 * may read the URI: its governing contract is one the discovery policy shows this caller, the
 * same rule a 2026-07-28 listen's `resourceSubscriptions` follow (listen.ts). Unsubscribing is
 * always allowed. Without sessions, neither is offered (Method not found); on 2026-07-28 a
 * client asks for updates on its listen stream instead.
 */
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { WritError } from "../../core/errors.ts";
import { readableResources } from "../listen.ts";
import type { MethodRegistration, ServerPost } from "./context.ts";

async function subscribeTo(post: ServerPost, uri: string, on: boolean): Promise<Record<string, never>> {
  const method = on ? "resources/subscribe" : "resources/unsubscribe";
  if (post.session === undefined) {
    const error = new WritError("invalid_argument", `${method} needs a session: Mcp-Session-Id is missing`, {
      suggestedFix: "send the Mcp-Session-Id your initialize answer carried",
    });
    throw new McpError(ErrorCode.InvalidRequest, error.message, { error: error.toJSON() });
  }
  if (on && !readableResources(post.gw, post.discovery, post.subject, new Set([uri])).has(uri)) {
    const error = new WritError("policy_denied", `you may not read ${uri}, so you may not subscribe to it`, {
      suggestedFix: "subscribe to a resource resources/list shows you",
    });
    throw new McpError(ErrorCode.InvalidParams, error.message, { error: error.toJSON() });
  }
  await post.session.subscribe(uri, on);
  return {};
}

export const subscribe: MethodRegistration = {
  legacy: (post) => {
    if (post.sessionsEnabled !== true) return;
    post.server.setRequestHandler(SubscribeRequestSchema, (request) =>
      subscribeTo(post, request.params.uri, true),
    );
    post.server.setRequestHandler(UnsubscribeRequestSchema, (request) =>
      subscribeTo(post, request.params.uri, false),
    );
  },
  modern: () => undefined,
};
