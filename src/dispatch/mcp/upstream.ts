/**
 * Upstream MCP servers: Writ is an MCP client of each configured server (stdio or Streamable
 * HTTP). It keeps each server's catalog (tools, and the resources, resource templates and
 * prompts of a server declaring them; all re-listed when the server says a list changed),
 * reconnects a server that went away, and calls tools, reads resources and gets prompts with the
 * grant in `_meta`.
 *
 * Upstream tool definitions are only used to know which tools exist right now: names,
 * descriptions, schemas and annotations (`readOnlyHint`, `destructiveHint`, …) shown to callers
 * come from Writ's contracts, never from the upstream. A server entry with `contracts: import` is
 * the one exception, by the operator's choice: its contracts are made from its catalog
 * (`onCatalog`, src/contracts/import/serve.ts), its annotations still not trusted unless it says so.
 */
import { randomUUID } from "node:crypto";
import type {
  CallToolResult,
  Client,
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  ReadResourceResult,
  RequestOptions,
  Transport,
} from "@modelcontextprotocol/client";
import type { ToolContract } from "../../contracts/schema.ts";
import { errorMessage, WritError } from "../../core/errors.ts";
import type { CallLogMessage, CallObserver } from "../../core/handlers.ts";
import type { CredentialResolver } from "../credentials.ts";
import { type Catalog, listCatalog, type UpstreamCatalog } from "./catalog.ts";
import { upstreamClient } from "./client.ts";
import type { RunningCall } from "./client-requests.ts";
import type { McpServerConfig } from "./config.ts";
import { answered, callFailure, cancelled, isSessionLost, wrongKind } from "./failures.ts";
import { completeResult, withInputRound } from "./input-required.ts";
import { requestMeta } from "./meta.ts";
import type { UpstreamMcpServers, UpstreamStatus } from "./servers.ts";
import { ResourceUpdates } from "./subscriptions.ts";
import { upstreamTransport } from "./transport.ts";

/** Reconnect back-off after an upstream went away: doubles from the first to the last. */
const RECONNECT_FIRST_MS = 500;
const RECONNECT_MAX_MS = 30_000;

const EMPTY_CATALOG: Readonly<Catalog> = { tools: new Map(), resources: [], templates: [], prompts: [] };

interface Upstream extends Catalog {
  config: McpServerConfig;
  client?: Client;
  /**
   * The calls running on this server, each with its observer (if any). Log messages and
   * server-to-client requests carry no request id, so one reaches a caller only while its call
   * is the only one running (client-requests.ts).
   */
  running: Set<RunningCall>;
  /** Progress tokens Writ sent with running calls, to their observers. */
  progress: Map<string, NonNullable<CallObserver["progress"]>>;
  error?: string;
  connecting?: Promise<void>;
  reconnectDelayMs: number;
  reconnectTimer?: NodeJS.Timeout;
}

export interface McpUpstreamsOptions {
  credentials: Pick<CredentialResolver, "resolve">;
  connectTimeoutMs: number;
  /** Where connection news goes (default console.error). */
  report?: (message: string) => void;
  /** Told, synchronously, each time a connected server's catalog was listed (at connect and on a change). */
  onCatalog?: (server: string) => void;
}

export class McpUpstreams implements UpstreamMcpServers {
  private readonly upstreams = new Map<string, Upstream>();
  private version = 0;
  readonly #listeners = new Set<() => void>();
  private closed = false;
  private readonly report: (message: string) => void;
  readonly #resources: ResourceUpdates;

  constructor(
    servers: readonly McpServerConfig[],
    private readonly options: McpUpstreamsOptions,
  ) {
    this.report = options.report ?? ((message) => console.error(message));
    const names = servers.map((config) => config.name);
    this.#resources = new ResourceUpdates(names, options.connectTimeoutMs, this.report);
    for (const config of servers) {
      this.upstreams.set(config.name, {
        config,
        ...EMPTY_CATALOG,
        tools: new Map(),
        running: new Set(),
        progress: new Map(),
        reconnectDelayMs: RECONNECT_FIRST_MS,
      });
    }
  }

  /** Connects every server and lists its tools; a server that fails is reported and retried later. */
  async start(): Promise<void> {
    await Promise.all([...this.upstreams.values()].map((u) => this.connect(u)));
  }

  /** Changes whenever any server's catalog changes (connect, list change, disconnect). */
  get catalogVersion(): number {
    return this.version;
  }

  /** Tells `listener`, synchronously, after any server's catalog changed; returns its removal. */
  onChange(listener: () => void): () => void {
    const entry = () => listener();
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }

  /** A server's catalog changed: a new version, `onCatalog` when it was listed, then the listeners. */
  #changed(server: string | undefined): void {
    this.version += 1;
    if (server !== undefined) this.options.onCatalog?.(server);
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch (error) {
        this.report(`mcp: a catalog listener failed: ${errorMessage(error)}`);
      }
    }
  }

  /** Holds a subscription to `uri` on `server` until the returned release (subscriptions.ts). */
  subscribeResource(server: string, uri: string): () => void {
    return this.#resources.acquire(server, uri);
  }

  onResourceUpdated(listener: (server: string, uri: string) => void): () => void {
    return this.#resources.onUpdated(listener);
  }

  /** Whether `server` is connected and currently lists `tool`. */
  offers(server: string, tool: string): boolean {
    const upstream = this.upstreams.get(server);
    return upstream?.client !== undefined && upstream.tools.has(tool);
  }

  /** The tools, resources, resource templates and prompts of each connected server. */
  catalogs(): UpstreamCatalog[] {
    return [...this.upstreams.values()].flatMap((u) =>
      u.client === undefined
        ? []
        : [
            {
              server: u.config.name,
              tools: [...u.tools.values()],
              resources: u.resources,
              templates: u.templates,
              prompts: u.prompts,
            },
          ],
    );
  }

  status(): UpstreamStatus[] {
    return [...this.upstreams.values()].map((u) => ({
      name: u.config.name,
      transport: u.config.transport,
      connected: u.client !== undefined,
      tools: u.tools.size,
      ...(u.client?.getNegotiatedProtocolVersion() === undefined
        ? {}
        : { protocol_version: u.client.getNegotiatedProtocolVersion() }),
      ...(u.error === undefined ? {} : { error: u.error }),
    }));
  }

  /**
   * Calls `tool` on `server` with the final arguments and the grant in `_meta`. Transport
   * failures and timeouts are WritErrors that say whether the effect may have happened; the
   * server's own answer (also `isError` results) is returned as it came. The observer gets the
   * server's progress (and its log messages while this call is the only one running), and
   * aborting its signal sends the server `notifications/cancelled`.
   */
  async call(
    contract: ToolContract,
    args: Record<string, unknown>,
    grant: string,
    requestId: string,
    observer?: CallObserver,
  ): Promise<CallToolResult> {
    const backend = contract.backend;
    if (backend.kind !== "mcp") throw wrongKind(contract, "mcp");
    const server = backend.server;
    // The SDK parses the answer (and checks structuredContent against the listed outputSchema);
    // an input round goes to a caller that takes it (input-required.ts).
    const result = await this.#send(contract, server, grant, requestId, observer, (client, meta, options) =>
      client.callTool(
        ...withInputRound({ name: backend.tool, arguments: args, _meta: meta }, options, observer),
      ),
    );
    return completeResult(contract, server, result, observer);
  }

  /** Reads `uri` on the contract's server with the grant in `_meta`; failures as for `call`. */
  async readResource(
    contract: ToolContract,
    uri: string,
    grant: string,
    requestId: string,
  ): Promise<ReadResourceResult> {
    const backend = contract.backend;
    if (backend.kind !== "mcp_resource") throw wrongKind(contract, "mcp_resource");
    return this.#send(contract, backend.server, grant, requestId, undefined, (client, meta, options) =>
      client.readResource({ uri, _meta: meta }, options),
    );
  }

  /** Gets the prompt `name` on the contract's server with the grant in `_meta`; failures as for `call`. */
  async getPrompt(
    contract: ToolContract,
    name: string,
    args: Record<string, string>,
    grant: string,
    requestId: string,
  ): Promise<GetPromptResult> {
    const backend = contract.backend;
    if (backend.kind !== "mcp_prompt") throw wrongKind(contract, "mcp_prompt");
    return this.#send(contract, backend.server, grant, requestId, undefined, (client, meta, options) =>
      client.getPrompt({ name, arguments: args, _meta: meta }, options),
    );
  }

  /** `completion/complete` on `server`: its suggestions (none when it declares no completions). */
  async complete(server: string, params: CompleteRequest["params"]): Promise<CompleteResult> {
    const client = this.upstreams.get(server)?.client;
    if (client === undefined) {
      throw new WritError("backend_unavailable", `the MCP server ${server} is not connected`, {
        suggestedFix: "retry later; Writ reconnects on its own",
      });
    }
    if (client.getServerCapabilities()?.completions === undefined) return { completion: { values: [] } };
    return client.complete(params, { timeout: this.options.connectTimeoutMs });
  }

  /** Sends one request for `contract` to `server`, connecting first and once more after a lost session. */
  async #send<T>(
    contract: ToolContract,
    server: string,
    grant: string,
    requestId: string,
    observer: CallObserver | undefined,
    send: Send<T>,
  ): Promise<T> {
    const upstream = this.upstreams.get(server);
    if (!upstream) {
      throw new WritError("backend_unavailable", `no MCP server named ${server} is configured`, {
        suggestedFix: "check the contract's backend.server against mcp.servers in the configuration",
        retryable: false,
        effectCommitted: false,
      });
    }
    // A server that went away is retried on its back-off schedule, not by every call.
    if (upstream.client === undefined && upstream.reconnectTimer === undefined) await this.connect(upstream);
    try {
      return await this.#sendOnce(upstream, contract, grant, requestId, observer, send);
    } catch (error) {
      if (!isSessionLost(error)) throw error;
      // The server no longer knows Writ's session (it restarted): it did not run the call, so
      // a new session may send it once more.
      await this.#drop(upstream);
      await this.connect(upstream);
      return this.#sendOnce(upstream, contract, grant, requestId, observer, send);
    }
  }

  async #sendOnce<T>(
    upstream: Upstream,
    contract: ToolContract,
    grant: string,
    requestId: string,
    observer: CallObserver | undefined,
    send: Send<T>,
  ): Promise<T> {
    const server = upstream.config.name;
    const client = upstream.client;
    if (client === undefined) {
      throw new WritError(
        "backend_unavailable",
        `${contract.name}: the MCP server ${server} is not connected${upstream.error ? ` (${upstream.error})` : ""}`,
        { suggestedFix: "retry later; Writ reconnects on its own", retryable: true, effectCommitted: false },
      );
    }
    const options: RequestOptions = { timeout: contract.timeout_ms };
    if (observer?.signal) options.signal = observer.signal;
    // Progress is routed by Writ's own token rather than the SDK's `onprogress`: the SDK drops a
    // progress notification that arrives together with the answer (it forgets the token first).
    const progressToken = observer?.progress ? `writ-${randomUUID()}` : undefined;
    if (progressToken !== undefined && observer?.progress)
      upstream.progress.set(progressToken, observer.progress);
    const running: RunningCall = { observer, contract: contract.name };
    upstream.running.add(running);
    try {
      const modernLogs = observer?.log !== undefined && client.getProtocolEra() === "modern";
      const meta = requestMeta({ grant, requestId, progressToken, modernLogs });
      return await send(client, meta, options);
    } catch (error) {
      if (error instanceof WritError) throw error;
      if (observer?.signal?.aborted) throw cancelled(contract, server);
      if (isSessionLost(error)) throw error;
      // The server is unreachable or the connection broke: reconnect on the back-off schedule.
      if (!answered(error)) await this.#drop(upstream);
      throw callFailure(contract, server, error);
    } finally {
      upstream.running.delete(running);
      // Late enough for a notification that came in with the answer (handled a microtask later).
      if (progressToken !== undefined) setImmediate(() => upstream.progress.delete(progressToken));
    }
  }

  /** A log message from `upstream`: to the caller of its only running call, if that caller listens. */
  #relayLog(upstream: Upstream, message: CallLogMessage): void {
    if (upstream.running.size !== 1) return;
    for (const { observer } of upstream.running) observer?.log?.(message);
  }

  /** Closes the current connection; `lost` then hides its tools and schedules a reconnect. */
  async #drop(upstream: Upstream, expected?: Client): Promise<void> {
    const client = upstream.client;
    if (client === undefined || (expected !== undefined && client !== expected)) return;
    await client.close().catch(() => undefined);
    this.lost(upstream, client);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [...this.upstreams.values()].map(async (u) => {
        clearTimeout(u.reconnectTimer);
        const client = u.client;
        u.client = undefined;
        await client?.close().catch(() => undefined);
      }),
    );
  }

  private connect(upstream: Upstream): Promise<void> {
    if (this.closed) return Promise.resolve();
    upstream.connecting ??= this.open(upstream).finally(() => {
      upstream.connecting = undefined;
    });
    return upstream.connecting;
  }

  private async open(upstream: Upstream): Promise<void> {
    const name = upstream.config.name;
    const relist = async () => {
      if (upstream.client !== client) return;
      await this.refresh(upstream, client).catch((error: unknown) => {
        this.report(`mcp: ${name}: re-listing the catalog failed: ${errorMessage(error)}`);
      });
    };
    const client: Client = upstreamClient(upstream.config, {
      changed: () => void relist(),
      progress: (token) => upstream.progress.get(token),
      log: (message) => {
        if (upstream.client === client) this.#relayLog(upstream, message);
      },
      running: () => upstream.running,
    });
    try {
      await client.connect(this.transportFor(upstream.config), { timeout: this.options.connectTimeoutMs });
      const catalog = await listCatalog(client, this.options.connectTimeoutMs);
      if (this.closed) {
        await client.close();
        return;
      }
      client.onclose = () => this.lost(upstream, client);
      // A 2026-07-28 server that ends its listen stream (it restarted, or went away) is
      // connected to again, which lists its catalog and listens anew.
      void client.autoOpenedSubscription?.closed.then((how) => {
        if (how !== "local") void this.#drop(upstream, client);
      });
      upstream.client = client;
      Object.assign(upstream, catalog);
      upstream.error = undefined;
      upstream.reconnectDelayMs = RECONNECT_FIRST_MS;
      this.#resources.attach(name, client);
      this.#changed(name);
    } catch (error) {
      upstream.error = errorMessage(error).slice(0, 300);
      this.report(`mcp: cannot connect to ${name}: ${upstream.error}`);
      await client.close().catch(() => undefined);
      this.scheduleReconnect(upstream);
    }
  }

  private async refresh(upstream: Upstream, client: Client): Promise<void> {
    const catalog = await listCatalog(client, this.options.connectTimeoutMs);
    if (upstream.client !== client) return;
    Object.assign(upstream, catalog);
    this.#changed(upstream.config.name);
  }

  private lost(upstream: Upstream, client: Client): void {
    if (upstream.client !== client) return;
    upstream.client = undefined;
    this.#resources.detach(upstream.config.name, client);
    Object.assign(upstream, EMPTY_CATALOG, { tools: new Map() });
    upstream.error = "the connection closed";
    this.#changed(undefined);
    if (!this.closed) {
      this.report(`mcp: the connection to ${upstream.config.name} closed; reconnecting`);
      this.scheduleReconnect(upstream);
    }
  }

  private scheduleReconnect(upstream: Upstream): void {
    if (this.closed || upstream.reconnectTimer !== undefined) return;
    const delay = upstream.reconnectDelayMs;
    upstream.reconnectDelayMs = Math.min(delay * 2, RECONNECT_MAX_MS);
    upstream.reconnectTimer = setTimeout(() => {
      upstream.reconnectTimer = undefined;
      if (upstream.client === undefined) void this.connect(upstream);
    }, delay);
    upstream.reconnectTimer.unref();
  }

  private transportFor(config: McpServerConfig): Transport {
    return upstreamTransport(config, { credentials: this.options.credentials, stderr: "inherit" });
  }
}

/** Sends one request on a connected client, with Writ's `_meta` and the request options. */
type Send<T> = (client: Client, meta: Record<string, unknown>, options: RequestOptions) => Promise<T>;
