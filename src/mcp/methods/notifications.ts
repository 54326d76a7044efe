/**
 * Notifications a POST brings. `notifications/cancelled` comes in a POST of its own: it is handed
 * to the server running the call (cancellation.ts, on this instance or another), where the SDK's
 * own handling aborts the call and withholds its answer. Only in a POST of notifications alone:
 * in one that also runs calls, the SDK's own handling must stay (a cancellation handed over to
 * this server would otherwise come back here). Every other notification is the SDK's.
 */
import { CancelledNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { isRecord } from "../../core/json.ts";
import type { MethodRegistration } from "./context.ts";

export const notifications: MethodRegistration = {
  legacy: ({ server, messages, cancellable, subject }) => {
    if (!carries(messages, "notifications/cancelled") || hasRequests(messages)) return;
    server.setNotificationHandler(CancelledNotificationSchema, ({ params }) => {
      if (params.requestId !== undefined) return cancellable.cancel(subject, params.requestId, params.reason);
    });
  },
  // A 2026-07-28 request is its own exchange: the caller cancels it by closing it (the SDK aborts
  // the handler's signal); its notifications are the SDK's.
  modern: () => undefined,
};

/** Whether a POST's body (one message or a batch) has a request (a message with an id and a method). */
function hasRequests(body: unknown): boolean {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.some((m) => isRecord(m) && typeof m.method === "string" && "id" in m);
}

/** Whether a POST's body (one message or a batch) has a message calling `method`. */
export function carries(body: unknown, method: string): boolean {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.some((m) => isRecord(m) && m.method === method);
}
