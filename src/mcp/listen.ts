/**
 * `subscriptions/listen` on 2026-07-28: a caller's long-lived SSE stream of list changes, relayed
 * from the upstream MCP servers and filtered per caller by the discovery policy.
 *
 * Each listen request gets its own v2 SDK entry (`createMcpHandler`, on a bus of its own: the
 * `CallerStream`), so the SDK keeps the wire (the revision's ladder, the acknowledgement with the
 * honored filter, the subscription id on every notification, keep-alives, teardown) and Writ only
 * decides what reaches this one caller. When an upstream's catalog changes (`onChange` of the
 * upstream servers, after imported contracts were rebuilt), each stream compares what its caller
 * sees (its tools, prompts, resources and templates, as discovery lists them) with what it saw:
 * only a list that changed for this caller is notified. A reloaded policy (the engine tells of
 * each revision it swaps in) is compared the same way. A caller who sees nothing of a server
 * hears nothing of it, and neither does one whose view did not change (a tool the policy hides).
 *
 * Resource updates: the URIs the listen's filter names (`resourceSubscriptions`) that the caller
 * may read (discovery lists them: their governing contract is visible to it) are held on their
 * upstream server (`subscribeResource`, reference-counted there) while the stream is open, and
 * the server's `notifications/resources/updated` for them are relayed; a URI the caller may not
 * read is never subscribed upstream nor relayed. What is held follows the caller's view (an
 * upstream's catalog change, a policy reload) and is released when the stream ends.
 *
 * The stream ends when the caller's token expires: at `exp` the entry is closed, which sends the
 * spec's graceful end (the empty `subscriptions/listen` result) before closing the stream. The
 * request passed the endpoint's checks (Host/Origin, the bearer token, the strict body, the
 * audit interceptor) as every POST does.
 *
 * Streams are per instance: each instance's upstream client sees every upstream change itself,
 * so an in-process bus is all it needs. `watch` gives the same to a 2025-11-25 session's GET
 * stream (session-streams.ts), which writes the events itself.
 */
import {
  createMcpHandler,
  type McpHttpHandler,
  type ServerEvent,
  type ServerEventBus,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Subject } from "../core/types.ts";
import type { Gateway, ToolDiscovery } from "../pipeline/index.ts";
import { newModernServer } from "./initialize.ts";
import { withErrorData } from "./messages.ts";

/** The most listen streams one instance keeps open (the SDK's own default). */
const MAX_STREAMS = 1024;
/** The longest a timer may wait (setTimeout's limit); a stream outliving it is re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const expSchema = z.object({ exp: z.number() });
/** When `subject`'s token expires (ms since the epoch): a stream opened with it ends then. */
export function tokenExpiryMs(subject: Subject): number {
  const claims = expSchema.safeParse(subject.claims);
  // A verified token always has `exp` (identity requires it); without one a stream ends at once.
  return claims.success ? claims.data.exp * 1000 : 0;
}

/** The resource URIs a listen request's filter asks for (the SDK checks the rest of the filter). */
const resourceFilterSchema = z.object({
  params: z.object({ notifications: z.object({ resourceSubscriptions: z.array(z.string()) }) }),
});

const LIST_KINDS = ["tools_list_changed", "prompts_list_changed", "resources_list_changed"] as const;
type ListKind = (typeof LIST_KINDS)[number];

/** What one caller sees of each list, as a comparable text. */
type View = Record<ListKind, string>;

function viewOf(discovery: ToolDiscovery, subject: Subject): View {
  return {
    tools_list_changed: JSON.stringify(discovery.list(subject, "mcp")),
    prompts_list_changed: JSON.stringify(discovery.prompts(subject)),
    resources_list_changed: JSON.stringify([discovery.resources(subject), discovery.templates(subject)]),
  };
}

/** A stream's resource subscriptions: what it asked for, what it may read, how to hold a URI. */
interface ResourceFeed {
  /** The requested URIs the caller may read now, each to its upstream server. */
  readable(): Map<string, string>;
  hold(server: string, uri: string): () => void;
}

/** The URIs of `requested` that discovery lists for `subject`, each to its server. */
export function readableResources(
  gw: Gateway,
  discovery: ToolDiscovery,
  subject: Subject,
  requested: ReadonlySet<string>,
): Map<string, string> {
  const readable = new Map<string, string>();
  if (requested.size === 0) return readable;
  for (const { item, contract } of discovery.resources(subject)) {
    if (!requested.has(item.uri)) continue;
    const backend = gw.contracts.get(contract.name, contract.version)?.backend;
    if (backend?.kind === "mcp_resource") readable.set(item.uri, backend.server);
  }
  return readable;
}

/** One caller's listen stream: the SDK entry's bus, fed only what this caller may hear. */
class CallerStream implements ServerEventBus {
  #listener: ((event: ServerEvent) => void) | undefined;
  #view: View;
  #timer: NodeJS.Timeout | undefined;
  /** The resource URIs held upstream for this stream: their server and release. */
  readonly #held = new Map<string, { server: string; release: () => void }>();

  constructor(
    private readonly discovery: ToolDiscovery,
    private readonly subject: Subject,
    private readonly expiresAtMs: number,
    private readonly resources: ResourceFeed,
    private readonly events: { opened(): void; ended(): void; expired(): void },
  ) {
    this.#view = viewOf(discovery, subject);
  }

  /** The SDK's listen router, once the stream is acknowledged (with something to listen for). */
  subscribe(listener: (event: ServerEvent) => void): () => void {
    this.#listener = listener;
    this.events.opened();
    this.#hold();
    this.#arm();
    return () => {
      if (this.#listener === undefined) return;
      this.#listener = undefined;
      clearTimeout(this.#timer);
      for (const { release } of this.#held.values()) release();
      this.#held.clear();
      this.events.ended();
    };
  }

  /** `server` says `uri` was updated: relayed when this stream holds it there. */
  updated(server: string, uri: string): void {
    if (this.#listener !== undefined && this.#held.get(uri)?.server === server) {
      this.publish({ kind: "resource_updated", uri });
    }
  }

  /** The requested URIs changed (a session's `resources/subscribe`): hold what it asks now. */
  refresh(): void {
    if (this.#listener !== undefined) this.#hold();
  }

  /** Holds upstream the requested URIs the caller may read now; releases the others. */
  #hold(): void {
    const readable = this.resources.readable();
    for (const [uri, held] of this.#held) {
      if (readable.get(uri) === held.server) continue;
      held.release();
      this.#held.delete(uri);
    }
    for (const [uri, server] of readable) {
      if (!this.#held.has(uri)) this.#held.set(uri, { server, release: this.resources.hold(server, uri) });
    }
  }

  /** Writ publishes through `changed` only. */
  publish(event: ServerEvent): void {
    this.#listener?.(event);
  }

  /** The catalogs changed: notify each list this caller sees differently now. */
  changed(): void {
    if (this.#listener === undefined) return;
    const view = viewOf(this.discovery, this.subject);
    for (const kind of LIST_KINDS) {
      if (view[kind] !== this.#view[kind]) this.publish({ kind });
    }
    this.#view = view;
    this.#hold();
  }

  /** Ends the stream at the token's `exp` (a timer is bounded: re-armed until then). */
  #arm(): void {
    const left = this.expiresAtMs - Date.now();
    this.#timer = setTimeout(
      () => (left > MAX_TIMER_MS ? this.#arm() : this.events.expired()),
      Math.min(Math.max(left, 0), MAX_TIMER_MS),
    );
    this.#timer.unref();
  }
}

/** The open listen streams of one `/mcp` endpoint. */
export class ListenStreams {
  readonly #streams = new Set<CallerStream>();

  constructor(
    private readonly gw: Gateway,
    private readonly discovery: ToolDiscovery,
  ) {
    gw.mcp?.onChange(() => this.#changed());
    gw.mcp?.onResourceUpdated((server, uri) => {
      for (const stream of this.#streams) stream.updated(server, uri);
    });
    // A reloaded policy may change what each caller sees.
    gw.policy.onInstalled(() => this.#changed());
  }

  #changed(): void {
    for (const stream of this.#streams) stream.changed();
  }

  /** The resources `subject` asks for (`requested`, read on each change) as a stream holds them. */
  #feed(subject: Subject, requested: () => ReadonlySet<string>): ResourceFeed {
    const mcp = this.gw.mcp;
    return {
      readable: () => readableResources(this.gw, this.discovery, subject, requested()),
      hold: (server, uri) => mcp?.subscribeResource(server, uri) ?? (() => undefined),
    };
  }

  /**
   * What a listen stream hears, for another kind of stream (a 2025-11-25 session's GET stream,
   * session-streams.ts): `listener` gets each list change of `subject`'s view and each update of
   * a `requested` URI it may read (held upstream while watched), until `close`; at `expiresAtMs`
   * `expired` is called. `refresh` re-reads `requested`.
   */
  watch(
    subject: Subject,
    expiresAtMs: number,
    requested: () => ReadonlySet<string>,
    listener: (event: ServerEvent) => void,
    expired: () => void,
  ): { refresh(): void; close(): void } {
    const stream: CallerStream = new CallerStream(
      this.discovery,
      subject,
      expiresAtMs,
      this.#feed(subject, requested),
      { opened: () => this.#streams.add(stream), ended: () => this.#streams.delete(stream), expired },
    );
    return { refresh: () => stream.refresh(), close: stream.subscribe(listener) };
  }

  /** Answers a `subscriptions/listen` request of `subject` (a 2026-07-28 POST, its body read). */
  async open(subject: Subject, request: Request, messages: unknown): Promise<Response> {
    const expiresAtMs = tokenExpiryMs(subject);
    const filter = resourceFilterSchema.safeParse(messages);
    const requested = new Set(filter.success ? filter.data.params.notifications.resourceSubscriptions : []);
    const resources = this.#feed(subject, () => requested);
    let handler: McpHttpHandler | undefined;
    const stream: CallerStream = new CallerStream(this.discovery, subject, expiresAtMs, resources, {
      opened: () => this.#streams.add(stream),
      ended: () => this.#streams.delete(stream),
      expired: () => void handler?.close(),
    });
    handler = createMcpHandler(() => newModernServer(), {
      legacy: "reject",
      bus: stream,
      // The SDK refuses the listen in-band (-32603) when this instance's streams are at the limit.
      maxSubscriptions: this.#streams.size >= MAX_STREAMS ? 0 : 1,
    });
    const response = await handler.fetch(request, { parsedBody: messages });
    // A JSON answer is a refusal the SDK sent in-band (a malformed filter, too many streams).
    return withErrorData(response, true);
  }
}
