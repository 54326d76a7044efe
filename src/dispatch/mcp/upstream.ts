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
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  type GetPromptResult,
  LoggingMessageNotificationSchema,
  McpError,
  ProgressNotificationSchema,
  PromptListChangedNotificationSchema,
  type ReadResourceResult,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { ToolContract } from "../../contracts/schema.ts";
import { errorMessage, WritError } from "../../core/errors.ts";
import type { CallLogMessage, CallObserver } from "../../core/handlers.ts";
import { scrubString } from "../../decisionlog/detectors.ts";
import { maskSecrets } from "../../results/index.ts";
import type { CredentialResolver } from "../credentials.ts";
import { type Catalog, listCatalog, type UpstreamCatalog } from "./catalog.ts";
import { GRANT_META_KEY, type McpServerConfig } from "./config.ts";
import { callFailure, cancelled, wrongKind } from "./failures.ts";
import { upstreamTransport } from "./transport.ts";

const WRIT_CLIENT = { name: "writ-gateway", version: "0.1.0" };
/** Reconnect back-off after an upstream went away: doubles from the first to the last. */
const RECONNECT_FIRST_MS = 500;
const RECONNECT_MAX_MS = 30_000;

export interface UpstreamStatus {
  name: string;
  transport: McpServerConfig["transport"];
  connected: boolean;
  tools: number;
  /** Why it is not connected (no secret: transport errors and the server's own messages). */
  error?: string;
}

const EMPTY_CATALOG: Readonly<Catalog> = { tools: new Map(), resources: [], templates: [], prompts: [] };

interface Upstream extends Catalog {
  config: McpServerConfig;
  client?: Client;
  /**
   * The calls running on this server, each with its observer (if any). Log messages carry no
   * request id, so one reaches a caller only while its call is the only one running.
   */
  running: Set<{ observer: CallObserver | undefined }>;
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

export class McpUpstreams {
  private readonly upstreams = new Map<string, Upstream>();
  private version = 0;
  private closed = false;
  private readonly report: (message: string) => void;

  constructor(
    servers: readonly McpServerConfig[],
    private readonly options: McpUpstreamsOptions,
  ) {
    this.report = options.report ?? ((message) => console.error(message));
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
    return this.#send(contract, server, grant, requestId, observer, async (client, meta, options) => {
      const result = await client.callTool(
        { name: backend.tool, arguments: args, _meta: meta },
        CallToolResultSchema,
        options,
      );
      // The SDK parsed the answer with CallToolResultSchema already; this only narrows its type.
      if (isCallToolResult(result)) return result;
      throw new WritError(
        "backend_error",
        `${contract.name}: the MCP server ${server} answered with a malformed result`,
        {
          suggestedFix: "tell the operator: the server's tools/call result does not follow the MCP schema",
          retryable: false,
          effectCommitted: contract.side_effect !== "none" ? "unknown" : false,
        },
      );
    });
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
      if (!(error instanceof StreamableHTTPError) || error.code !== 404) throw error;
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
    const running = { observer };
    upstream.running.add(running);
    try {
      const meta = {
        [GRANT_META_KEY]: grant,
        "writ/request_id": requestId,
        ...(progressToken === undefined ? {} : { progressToken }),
      };
      return await send(client, meta, options);
    } catch (error) {
      if (error instanceof WritError) throw error;
      if (observer?.signal?.aborted) throw cancelled(contract, server);
      if (error instanceof StreamableHTTPError && error.code === 404) throw error;
      // The server is unreachable or the connection broke: reconnect on the back-off schedule.
      if (!(error instanceof McpError) || error.code === ErrorCode.ConnectionClosed)
        await this.#drop(upstream);
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
  async #drop(upstream: Upstream): Promise<void> {
    const client = upstream.client;
    if (client === undefined) return;
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
    const client = new Client(WRIT_CLIENT, { capabilities: {} });
    try {
      const transport = this.transportFor(upstream.config);
      await client.connect(transport, { timeout: this.options.connectTimeoutMs });
      client.setNotificationHandler(ProgressNotificationSchema, ({ params }) => {
        const report = upstream.progress.get(String(params.progressToken));
        report?.({
          progress: params.progress,
          ...(params.total === undefined ? {} : { total: params.total }),
          ...(params.message === undefined ? {} : { message: scrubString(params.message) }),
        });
      });
      client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
        if (upstream.client !== client) return;
        this.#relayLog(upstream, {
          level: params.level,
          ...(params.logger === undefined ? {} : { logger: params.logger }),
          data: maskSecrets(params.data),
        });
      });
      const relist = async () => {
        if (upstream.client !== client) return;
        await this.refresh(upstream, client).catch((error: unknown) => {
          this.report(`mcp: ${name}: re-listing the catalog failed: ${errorMessage(error)}`);
        });
      };
      client.setNotificationHandler(ToolListChangedNotificationSchema, relist);
      client.setNotificationHandler(ResourceListChangedNotificationSchema, relist);
      client.setNotificationHandler(PromptListChangedNotificationSchema, relist);
      const catalog = await listCatalog(client, this.options.connectTimeoutMs);
      if (this.closed) {
        await client.close();
        return;
      }
      client.onclose = () => this.lost(upstream, client);
      upstream.client = client;
      Object.assign(upstream, catalog);
      upstream.error = undefined;
      upstream.reconnectDelayMs = RECONNECT_FIRST_MS;
      this.version += 1;
      this.options.onCatalog?.(name);
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
    this.version += 1;
    this.options.onCatalog?.(upstream.config.name);
  }

  private lost(upstream: Upstream, client: Client): void {
    if (upstream.client !== client) return;
    upstream.client = undefined;
    Object.assign(upstream, EMPTY_CATALOG, { tools: new Map() });
    upstream.error = "the connection closed";
    this.version += 1;
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

/** A `tools/call` answer of the current protocol (`content`), not the 2024-10-07 `toolResult`. */
function isCallToolResult(result: CallToolResult | { toolResult: unknown }): result is CallToolResult {
  return "content" in result && Array.isArray(result.content);
}

/** Sends one request on a connected client, with Writ's `_meta` and the request options. */
type Send<T> = (client: Client, meta: Record<string, unknown>, options: RequestOptions) => Promise<T>;
