/**
 * Writ's MCP client of one upstream server (upstream.ts connects it): its identity, its
 * capabilities, and the handlers of what the server sends on its own: list changes, progress of
 * Writ's calls, log messages, and the server-to-client requests it forwards (client-requests.ts).
 */
import { Client, type ListChangedHandlers } from "@modelcontextprotocol/client";
import type { CallLogMessage, CallProgress } from "../../core/handlers.ts";
import { scrubString } from "../../decisionlog/detectors.ts";
import { maskSecrets } from "../../results/index.ts";
import { FORWARDED_CAPABILITIES, forwardClientRequests, type RunningCall } from "./client-requests.ts";
import type { McpServerConfig } from "./config.ts";
import { upstreamNegotiation } from "./transport.ts";

const WRIT_CLIENT = { name: "writ-gateway", version: "0.1.0" };

export interface UpstreamClientHooks {
  /** Told when any of the server's lists changed. */
  changed(): void;
  /** Whom a progress token Writ sent reports to, while its call runs. */
  progress(token: string): ((update: CallProgress) => void) | undefined;
  /** A log message the server sent (secrets masked). */
  log(message: CallLogMessage): void;
  /** The calls running on the server. */
  running(): ReadonlySet<RunningCall>;
}

/** A client for `config`'s server, not connected yet. */
export function upstreamClient(config: McpServerConfig, hooks: UpstreamClientHooks): Client {
  // A change to any list re-lists the whole catalog. On a 2025 connection these are the
  // server's list_changed notifications; on a 2026-07-28 one the SDK opens the
  // `subscriptions/listen` stream that carries them.
  const onChanged = { autoRefresh: false, debounceMs: 0, onChanged: () => hooks.changed() };
  const listChanged: ListChangedHandlers = { tools: onChanged, prompts: onChanged, resources: onChanged };
  const client = new Client(WRIT_CLIENT, {
    capabilities: FORWARDED_CAPABILITIES,
    versionNegotiation: upstreamNegotiation(config.protocol_version),
    listChanged,
  });
  client.setNotificationHandler("notifications/progress", ({ params }) => {
    hooks.progress(String(params.progressToken))?.({
      progress: params.progress,
      ...(params.total === undefined ? {} : { total: params.total }),
      ...(params.message === undefined ? {} : { message: scrubString(params.message) }),
    });
  });
  client.setNotificationHandler("notifications/message", ({ params }) => {
    hooks.log({
      level: params.level,
      ...(params.logger === undefined ? {} : { logger: params.logger }),
      data: maskSecrets(params.data),
    });
  });
  forwardClientRequests(client, config.name, hooks.running);
  return client;
}
