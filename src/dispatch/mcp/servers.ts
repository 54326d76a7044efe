/**
 * What the rest of the gateway needs of the upstream MCP servers (`McpUpstreams`, upstream.ts,
 * implements it): their catalogs for discovery and imported contracts, their status for /healthz
 * and /metrics, the three requests the MCP backends send, and completions. Types only: naming it loads no MCP
 * client.
 */
import type {
  CallToolResult,
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  ReadResourceResult,
} from "@modelcontextprotocol/client";
import type { ToolContract } from "../../contracts/schema.ts";
import type { CallObserver } from "../../core/handlers.ts";
import type { UpstreamCatalog } from "./catalog.ts";
import type { McpServerConfig } from "./config.ts";

export interface UpstreamStatus {
  name: string;
  transport: McpServerConfig["transport"];
  connected: boolean;
  tools: number;
  /** The protocol revision negotiated with it ("2026-07-28", or a 2025 revision), while connected. */
  protocol_version?: string;
  /** Why it is not connected (no secret: transport errors and the server's own messages). */
  error?: string;
}

export interface UpstreamMcpServers {
  /** Changes whenever any server's catalog changes (connect, list change, disconnect). */
  readonly catalogVersion: number;
  /**
   * Tells `listener`, synchronously, after any server's catalog changed (listed at connect or on
   * a list change, after `onCatalog`; or gone with its connection); returns its removal.
   */
  onChange(listener: () => void): () => void;
  /**
   * Holds a subscription to the resource `uri` on `server` (reference-counted: the server is
   * subscribed while anyone holds it) until the returned release is called.
   */
  subscribeResource(server: string, uri: string): () => void;
  /** Tells `listener` of each `notifications/resources/updated` a server sends; returns its removal. */
  onResourceUpdated(listener: (server: string, uri: string) => void): () => void;
  /** Whether `server` is connected and currently lists `tool`. */
  offers(server: string, tool: string): boolean;
  /** The tools, resources, resource templates and prompts of each connected server. */
  catalogs(): UpstreamCatalog[];
  status(): UpstreamStatus[];
  /** `tools/call` of the contract's tool, with the grant in `_meta`. */
  call(
    contract: ToolContract,
    args: Record<string, unknown>,
    grant: string,
    requestId: string,
    observer?: CallObserver,
  ): Promise<CallToolResult>;
  /** `resources/read` of `uri` on the contract's server, with the grant in `_meta`. */
  readResource(
    contract: ToolContract,
    uri: string,
    grant: string,
    requestId: string,
  ): Promise<ReadResourceResult>;
  /** `prompts/get` of the prompt `name` on the contract's server, with the grant in `_meta`. */
  getPrompt(
    contract: ToolContract,
    name: string,
    args: Record<string, string>,
    grant: string,
    requestId: string,
  ): Promise<GetPromptResult>;
  /** `completion/complete` on `server` (no suggestions from a server that declares no completions). */
  complete(server: string, params: CompleteRequest["params"]): Promise<CompleteResult>;
}
