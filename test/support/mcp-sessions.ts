/**
 * Raw HTTP for 2025-11-25 sessions on a gateway's /mcp (src/mcp/sessions.ts): `initialize` that
 * returns the session id, requests that name it, and an SSE reader that stops when told (the
 * event it waits for), so a test can drop a stream mid-way and resume it with Last-Event-ID.
 */
import { z } from "zod";

export interface SseEvent {
  id: string | undefined;
  retry: number | undefined;
  /** The JSON-RPC message, or undefined for an event without data (a priming event). */
  message: unknown;
}

/** `initialize` as a v1 client sends it: the session id the answer carries. */
export async function initializeSession(url: string, token: string): Promise<string> {
  const answer = await sessionRequest(url, token, undefined, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: { sampling: {}, roots: { listChanged: true } },
      clientInfo: { name: "raw", version: "1.0.0" },
    },
  });
  const id = answer.headers.get("mcp-session-id");
  if (answer.status !== 200 || id === null)
    throw new Error(`initialize answered ${answer.status} without a session`);
  await answer.body?.cancel();
  return id;
}

/** A request to `url` (…/mcp) with a bearer token, the session id (when given) and a JSON body. */
export function sessionRequest(
  url: string,
  token: string,
  session: string | undefined,
  body?: unknown,
  init: { method?: string; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: init.method ?? (body === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${token}`,
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(session === undefined ? {} : { "mcp-session-id": session }),
      ...init.headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    ...(init.signal ? { signal: init.signal } : {}),
  });
}

function parseEvent(block: string): SseEvent {
  let id: string | undefined;
  let retry: number | undefined;
  const data: string[] = [];
  for (const line of block.split("\n")) {
    const [field, ...rest] = line.split(":");
    const value = rest.join(":").replace(/^ /, "");
    if (field === "id") id = value;
    if (field === "retry") retry = Number(value);
    if (field === "data") data.push(value);
  }
  const text = data.join("\n");
  return { id, retry, message: text.trim() === "" ? undefined : z.unknown().parse(JSON.parse(text)) };
}

/**
 * The SSE events of `response` until `done` says the last one read is enough (the stream is then
 * cancelled: the client going away) or the stream ends.
 */
export async function readEvents(
  response: Response,
  done: (event: SseEvent) => boolean = () => false,
): Promise<SseEvent[]> {
  if (response.body === null) throw new Error("no body");
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const events: SseEvent[] = [];
  let buffered = "";
  for (;;) {
    const { value, done: ended } = await reader.read();
    if (ended) return events;
    buffered += value;
    let end = buffered.indexOf("\n\n");
    while (end >= 0) {
      const event = parseEvent(buffered.slice(0, end));
      buffered = buffered.slice(end + 2);
      events.push(event);
      if (done(event)) {
        await reader.cancel();
        return events;
      }
      end = buffered.indexOf("\n\n");
    }
  }
}

const responseSchema = z.looseObject({ id: z.union([z.string(), z.number()]) });

/** Whether `event` carries the response to the request `id`. */
export function answers(event: SseEvent, id: number): boolean {
  const parsed = responseSchema.safeParse(event.message);
  return parsed.success && parsed.data.id === id && !("method" in parsed.data);
}
