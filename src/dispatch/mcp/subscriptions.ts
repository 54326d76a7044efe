/**
 * One upstream server's resource subscriptions, reference-counted: each `/mcp` listen stream
 * that asks for a URI holds it (`acquire`), and the server is subscribed while anyone does. On a
 * 2025 connection that is `resources/subscribe` / `resources/unsubscribe` per URI; on a
 * 2026-07-28 one a `subscriptions/listen` of the client's with `resourceSubscriptions`, re-opened
 * whenever the URI set changes. Either way the server's `notifications/resources/updated` reach
 * the client's notification handler (upstream.ts), era-transparently. A new connection
 * (`attach`) subscribes to everything held again; the last release unsubscribes.
 */
import type { Client, McpSubscription } from "@modelcontextprotocol/client";
import { errorMessage } from "../../core/errors.ts";

type UpdatedListener = (server: string, uri: string) => void;

/** The resource subscriptions of every upstream server, and who hears of their updates. */
export class ResourceUpdates {
  readonly #servers = new Map<string, ResourceSubscriptions>();
  readonly #listeners = new Set<UpdatedListener>();

  constructor(servers: readonly string[], timeoutMs: number, report: (message: string) => void) {
    for (const server of servers)
      this.#servers.set(server, new ResourceSubscriptions(server, timeoutMs, report));
  }

  /** Holds `uri` on `server` until the returned release; a server not configured holds nothing. */
  acquire(server: string, uri: string): () => void {
    return this.#servers.get(server)?.acquire(uri) ?? (() => undefined);
  }

  /** `server` connected anew: it hears of its held URIs' updates, which go to the listeners. */
  attach(server: string, client: Client): void {
    client.setNotificationHandler("notifications/resources/updated", ({ params }) => {
      for (const listener of this.#listeners) listener(server, params.uri);
    });
    this.#servers.get(server)?.attach(client);
  }

  detach(server: string, client: Client): void {
    this.#servers.get(server)?.detach(client);
  }

  /** Tells `listener` each `notifications/resources/updated` of a server; returns its removal. */
  onUpdated(listener: UpdatedListener): () => void {
    const entry: UpdatedListener = (server, uri) => listener(server, uri);
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }
}

/** A listen the server ends sooner than this counts as ended straight away. */
const SHORT_LISTEN_MS = 10_000;
/** The wait before listening again after the first such end, doubled after each one more, up to the most. */
const RELISTEN_FIRST_MS = 500;
const RELISTEN_MAX_MS = 30_000;

class ResourceSubscriptions {
  /** How many holders each URI has. */
  readonly #held = new Map<string, number>();
  #client: Client | undefined;
  /** The URIs the current connection is subscribed to (2025: one by one; 2026-07-28: `#listen`'s). */
  #applied = new Set<string>();
  #listen: McpSubscription | undefined;
  /** The syncs run one after another, so the server sees subscribes and unsubscribes in order. */
  #queue: Promise<void> = Promise.resolve();
  /** Listens the server ended soon after they opened, in a row: each waits twice as long to listen again. */
  #shortLived = 0;
  #relistenTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly server: string,
    private readonly timeoutMs: number,
    private readonly report: (message: string) => void,
  ) {}

  /** Holds `uri` until the returned release is called (idempotent). */
  acquire(uri: string): () => void {
    this.#held.set(uri, (this.#held.get(uri) ?? 0) + 1);
    this.#sync();
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const count = (this.#held.get(uri) ?? 1) - 1;
      if (count > 0) this.#held.set(uri, count);
      else this.#held.delete(uri);
      this.#sync();
    };
  }

  /** A new connection: everything held is subscribed on it. */
  attach(client: Client): void {
    this.#client = client;
    this.#applied = new Set();
    this.#listen = undefined;
    this.#sync();
  }

  /** The connection is gone (its subscriptions with it). */
  detach(client: Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#applied = new Set();
    this.#listen = undefined;
    clearTimeout(this.#relistenTimer);
  }

  #sync(): void {
    const client = this.#client;
    if (client === undefined) return;
    this.#queue = this.#queue
      .then(() => (client.getProtocolEra() === "modern" ? this.#relisten(client) : this.#apply(client)))
      .catch((error: unknown) => {
        this.report(`mcp: ${this.server}: resource subscriptions failed: ${errorMessage(error)}`);
      });
  }

  /** 2025: subscribe to what is newly held, unsubscribe from what no one holds any more. */
  async #apply(client: Client): Promise<void> {
    const options = { timeout: this.timeoutMs };
    for (const uri of this.#held.keys()) {
      if (this.#client !== client || this.#applied.has(uri)) continue;
      await client.subscribeResource({ uri }, options);
      this.#applied.add(uri);
    }
    for (const uri of [...this.#applied]) {
      if (this.#client !== client || this.#held.has(uri)) continue;
      this.#applied.delete(uri);
      await client.unsubscribeResource({ uri }, options);
    }
  }

  /** 2026-07-28: one listen for the whole held set, re-opened when the set changed. */
  async #relisten(client: Client): Promise<void> {
    const wanted = [...this.#held.keys()].sort();
    if (this.#client !== client || sameSet(wanted, this.#applied)) return;
    const previous = this.#listen;
    this.#listen = undefined;
    this.#applied = new Set();
    await previous?.close();
    if (wanted.length === 0) return;
    const listen = await client.listen({ resourceSubscriptions: wanted }, { timeout: this.timeoutMs });
    if (this.#client !== client) return void (await listen.close());
    this.#listen = listen;
    this.#applied = new Set(wanted);
    const opened = Date.now();
    // The server ended it (a restart, a graceful end): listen again while the connection lasts,
    // at once after a listen that lasted, later and later after ones it ends straight away.
    void listen.closed.then((how) => {
      if (how === "local" || this.#listen !== listen) return;
      this.#listen = undefined;
      this.#applied = new Set();
      this.#shortLived = Date.now() - opened < SHORT_LISTEN_MS ? this.#shortLived + 1 : 0;
      const wait =
        this.#shortLived === 0
          ? 0
          : Math.min(RELISTEN_MAX_MS, RELISTEN_FIRST_MS * 2 ** (this.#shortLived - 1));
      clearTimeout(this.#relistenTimer);
      this.#relistenTimer = setTimeout(() => this.#sync(), wait);
      this.#relistenTimer.unref();
    });
  }
}

function sameSet(list: readonly string[], set: ReadonlySet<string>): boolean {
  return list.length === set.size && list.every((item) => set.has(item));
}
