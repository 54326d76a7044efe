/**
 * The SSE streams of 2025-11-25 sessions (sessions.ts), resumable at any instance: every event
 * is kept in the store (`McpSessionStore`, bounded by `mcp.sessions.max_events`, expiring with
 * the session) before it is written, under its id (the store's sequence), so a client that lost
 * a stream reconnects with `Last-Event-ID` — at this instance or another — and gets what it
 * missed. Each stream starts with the spec's priming event (an id, the `retry` the client waits
 * before reconnecting, no data; not for clients older than 2025-11-25, which cannot read one).
 *
 * - A `tools/call` POST on a session that accepts SSE is answered as such a stream (`post`): each
 *   message of the call (progress, log messages, the answer) kept, then written; the stream ends
 *   with the answer. A client gone mid-call does not stop it: its messages are still kept. With
 *   `poll_after_ms` (SEP-1699 polling) Writ closes a stream still unanswered that long after its
 *   priming event itself, and the client resumes it.
 * - The GET stream (`get`) carries the session's notifications: the list changes of what this
 *   caller sees and the updates of the resources it subscribed and may read, as a 2026-07-28
 *   listen stream hears them (listen.ts's `watch`, the same discovery comparison); it re-reads the
 *   session's subscriptions when one changes here, and every `SESSION_CHECK_MS` (a subscription
 *   made at another instance; a session ended there closes the stream). It ends at the token's
 *   expiry.
 * - A resumed stream (`Last-Event-ID`) replays the events kept after that id on the same stream;
 *   a POST's then follows the call's next events until its answer (woken by this instance's own,
 *   polled every `POLL_MS` for another instance's), a GET stream goes on live.
 */
import { randomUUID } from "node:crypto";
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCNotification } from "@modelcontextprotocol/sdk/types.js";
import type { ServerEvent } from "@modelcontextprotocol/server";
import { isRecord } from "../core/json.ts";
import type { Subject } from "../core/types.ts";
import type { McpSessionRecord, McpSessionStore } from "../store/types.ts";
import type { McpSessionsConfig } from "./config.ts";
import { type LazyStream, SSE_HEADERS } from "./lazy-stream.ts";
import { type ListenStreams, tokenExpiryMs } from "./listen.ts";

/** How often a resumed POST stream looks for events another instance kept. */
const POLL_MS = 250;
/** How often a GET stream re-reads its session (ended elsewhere?) and its subscriptions. */
const SESSION_CHECK_MS = 2000;
/** The longest a timer may wait; a stream would end then (the client reconnects). */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** The first revision whose clients read an event without data (the priming event). */
const PRIMING_SINCE = "2025-11-25";

const encoder = new TextEncoder();

/** One SSE answer, written as its events are kept. */
class SseResponse {
  readonly response: Response;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  #open = true;
  readonly #ended: (() => void)[] = [];

  constructor() {
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      cancel: () => this.#end(),
    });
    this.response = new Response(body, { status: 200, headers: SSE_HEADERS });
  }

  get open(): boolean {
    return this.#open;
  }

  /** Writes an event: `seq` its id (none when it could not be kept), `message` '' for priming. */
  event(seq: number | undefined, message: string, retryMs?: number): void {
    if (!this.#open) return;
    const id = seq === undefined ? "" : `id: ${seq}\n`;
    const retry = retryMs === undefined ? "" : `retry: ${retryMs}\n`;
    const data = message === "" ? "data: \n\n" : `event: message\ndata: ${message}\n\n`;
    try {
      this.#controller?.enqueue(encoder.encode(`${id}${retry}${data}`));
    } catch {
      this.#end();
    }
  }

  close(): void {
    if (!this.#open) return;
    try {
      this.#controller?.close();
    } catch {
      // closed by the client already
    }
    this.#end();
  }

  /** Calls `cleanup` once the stream ends (closed here, or by the client). */
  onEnd(cleanup: () => void): void {
    if (this.#open) this.#ended.push(cleanup);
    else cleanup();
  }

  #end(): void {
    if (!this.#open) return;
    this.#open = false;
    for (const cleanup of this.#ended.splice(0)) cleanup();
  }
}

/** Whether a kept message is a response (the last event of a POST's stream). */
function isResponse(message: string): boolean {
  if (message === "") return false;
  const parsed: unknown = JSON.parse(message);
  return isRecord(parsed) && !("method" in parsed);
}

const NOTIFICATIONS = {
  tools_list_changed: "notifications/tools/list_changed",
  prompts_list_changed: "notifications/prompts/list_changed",
  resources_list_changed: "notifications/resources/list_changed",
} as const;

/** A listen event as the 2025-11-25 notification a session's GET stream carries. */
function notificationOf(event: ServerEvent): JSONRPCNotification {
  if (event.kind === "resource_updated") {
    return { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: event.uri } };
  }
  return { jsonrpc: "2.0", method: NOTIFICATIONS[event.kind] };
}

/** A timer that does not keep the process alive. */
function unrefTimer(run: () => void, ms: number): NodeJS.Timeout {
  const timer = setTimeout(run, Math.min(Math.max(ms, 0), MAX_TIMER_MS));
  timer.unref();
  return timer;
}

/** This instance's waiters for the events of a session's stream (or its subscriptions) kept here. */
class Wakeups {
  readonly #waiters = new Map<string, Set<() => void>>();

  on(key: string, wake: () => void): () => void {
    let set = this.#waiters.get(key);
    if (set === undefined) {
      set = new Set();
      this.#waiters.set(key, set);
    }
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0) this.#waiters.delete(key);
    };
  }

  notify(key: string): void {
    for (const wake of this.#waiters.get(key) ?? []) wake();
  }
}

/** The subscriptions of the session `idHash` changed (its Wakeups key). */
const subscriptionsKey = (idHash: string) => `${idHash} subscriptions`;

export class SessionStreams {
  readonly #wakeups = new Wakeups();

  constructor(
    private readonly store: McpSessionStore,
    private readonly config: McpSessionsConfig,
    /** The endpoint's listen streams (what a GET stream hears, as a listen stream would). */
    private readonly listen: () => ListenStreams,
  ) {}

  /** Keeps `message` as the next event of the session's `stream`: its id. */
  async #keep(record: McpSessionRecord, stream: string, message: string): Promise<number> {
    const seq = await this.store.appendMcpEvent(record, stream, message, this.config.max_events);
    this.#wakeups.notify(`${record.id_hash} ${stream}`);
    return seq;
  }

  /** The stream's first event: an id to resume from, and how long to wait before reconnecting. */
  async #prime(record: McpSessionRecord, stream: string, sse: SseResponse): Promise<void> {
    if (record.protocol_version < PRIMING_SINCE) return;
    sse.event(await this.#keep(record, stream, ""), "", this.config.retry_ms);
  }

  /** Writes `message` to `sse` once kept (in order after `queue`); the new queue. */
  #keptThenWritten(
    queue: Promise<void>,
    record: McpSessionRecord,
    stream: string,
    sse: SseResponse,
    message: string,
  ): Promise<void> {
    return queue.then(async () => {
      let seq: number | undefined;
      try {
        seq = await this.#keep(record, stream, message);
      } catch {
        // Not kept (the store failed): still sent, without an id to resume from.
      }
      sse.event(seq, message);
    });
  }

  /** The subscriptions of the session changed here: its GET streams on this instance re-read them. */
  subscriptionsChanged(record: McpSessionRecord): void {
    this.#wakeups.notify(subscriptionsKey(record.id_hash));
  }

  /**
   * The answer of a session's `tools/call` POST as a resumable stream: the messages the transport
   * sends about the call, each kept then written, the answer last.
   */
  post(record: McpSessionRecord, transport: WebStandardStreamableHTTPServerTransport): LazyStream {
    const stream = `post:${randomUUID()}`;
    const sse = new SseResponse();
    let queue = this.#prime(record, stream, sse).catch(() => undefined);
    const pollAfter = this.config.poll_after_ms;
    if (pollAfter !== undefined && record.protocol_version >= PRIMING_SINCE) {
      void queue.then(() => {
        const poll = unrefTimer(() => sse.close(), pollAfter);
        sse.onEnd(() => clearTimeout(poll));
      });
    }
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      const response = !("method" in message);
      if (response || options?.relatedRequestId !== undefined) {
        queue = this.#keptThenWritten(queue, record, stream, sse, JSON.stringify(message));
        if (response) queue = queue.then(() => sse.close());
      }
      return send(message, options);
    };
    return { opened: Promise.resolve(sse.response), settle: () => undefined };
  }

  /** A session's GET: its notification stream, or (`lastEventId`) a stream resumed; undefined: no such event. */
  async get(
    record: McpSessionRecord,
    subject: Subject,
    lastEventId: string | null,
  ): Promise<Response | undefined> {
    const sse = new SseResponse();
    if (lastEventId === null) {
      const stream = `get:${randomUUID()}`;
      await this.#prime(record, stream, sse);
      this.#live(record, subject, stream, sse);
      return sse.response;
    }
    const after = /^\d{1,15}$/.test(lastEventId) ? Number(lastEventId) : undefined;
    const stream = after === undefined ? undefined : await this.store.mcpEventStream(record.id_hash, after);
    if (after === undefined || stream === undefined) return undefined;
    if (stream.startsWith("get:")) {
      for (const missed of await this.store.mcpEventsAfter(record.id_hash, stream, after)) {
        if (missed.message !== "") sse.event(missed.seq, missed.message);
      }
      this.#live(record, subject, stream, sse);
    } else {
      this.#follow(record, subject, stream, after, sse);
    }
    return sse.response;
  }

  /** A GET stream, live: the caller's notifications kept and written until it ends. */
  #live(record: McpSessionRecord, subject: Subject, stream: string, sse: SseResponse): void {
    let requested: ReadonlySet<string> = new Set();
    let queue = Promise.resolve();
    const watch = this.listen().watch(
      subject,
      Math.min(tokenExpiryMs(subject), record.expires_at.getTime()),
      () => requested,
      (event) => {
        queue = this.#keptThenWritten(queue, record, stream, sse, JSON.stringify(notificationOf(event)));
      },
      () => sse.close(),
    );
    const reread = () =>
      void Promise.all([
        this.store.readMcpSession(record.id_hash),
        this.store.mcpSubscriptions(record.id_hash),
      ])
        .then(([current, subscribed]) => {
          if (current === undefined) return sse.close();
          requested = new Set(subscribed);
          watch.refresh();
        })
        .catch(() => undefined);
    reread();
    const check = setInterval(reread, SESSION_CHECK_MS);
    check.unref();
    const off = this.#wakeups.on(subscriptionsKey(record.id_hash), reread);
    sse.onEnd(() => {
      clearInterval(check);
      off();
      watch.close();
    });
  }

  /** A POST's stream resumed after `after`: its next events until the answer, or the token's expiry. */
  #follow(record: McpSessionRecord, subject: Subject, stream: string, after: number, sse: SseResponse): void {
    let last = after;
    let reading: Promise<void> | undefined;
    const readOnce = async () => {
      for (const event of await this.store.mcpEventsAfter(record.id_hash, stream, last)) {
        last = event.seq;
        if (event.message === "") continue;
        sse.event(event.seq, event.message);
        if (isResponse(event.message)) return sse.close();
      }
    };
    // One read at a time; a wake-up during a read reads again after it.
    const read = () => {
      reading = (reading ?? Promise.resolve()).then(readOnce).catch(() => sse.close());
    };
    const off = this.#wakeups.on(`${record.id_hash} ${stream}`, read);
    const poll = setInterval(read, POLL_MS);
    poll.unref();
    const expiry = Math.min(tokenExpiryMs(subject), record.expires_at.getTime());
    const ends = unrefTimer(() => sse.close(), expiry - Date.now());
    sse.onEnd(() => {
      off();
      clearInterval(poll);
      clearTimeout(ends);
    });
    read();
  }
}
