/**
 * A backend kind (a contract's `backend.kind`) as dispatch sees it: one `Backend` per kind, listed
 * in registry.ts, the one place dispatch tells the kinds apart. Types only, so that every kind's
 * module can name them without importing the registry that imports it.
 */
import type { ToolBackend, ToolContract } from "../contracts/schema.ts";
import type { CallObserver, InProcessHandler, ToolOutput } from "../core/handlers.ts";
import type { GrantClaims } from "../core/types.ts";
import type { StoredResource } from "../store/types.ts";
import type { BackendCredentials } from "./credentials.ts";
import type { UpstreamMcpServers } from "./mcp/servers.ts";

export type BackendKind = ToolBackend["kind"];
export type BackendOf<K extends BackendKind> = Extract<ToolBackend, { kind: K }>;

/** The gateway's parts a backend reaches (a `Gateway` is one). */
export interface BackendDeps {
  handlers: ReadonlyMap<string, InProcessHandler>;
  /** Backend credentials: attached here, at dispatch, only. */
  credentials: BackendCredentials;
  /** The upstream MCP servers, when `mcp.servers` names any. */
  mcp?: UpstreamMcpServers | undefined;
}

/** A granted call on its way to its backend. */
export interface BackendCall<K extends BackendKind> {
  contract: ToolContract;
  /** `contract.backend`, narrowed to its kind. */
  backend: BackendOf<K>;
  /** The signed grant, sent along so that the backend's executor can verify it. */
  grant: string;
  requestId: string;
  /** Who watches the call while it runs (progress, log messages, cancellation). */
  observer?: CallObserver | undefined;
}

/**
 * Runs the call with its final arguments (after the conditions' overrides), once the grant is
 * spent: `stored` is the resource as the conditions saw it, `claims` the verified grant's.
 */
export type BackendRun = (
  args: Record<string, unknown>,
  stored: StoredResource | undefined,
  claims: GrantClaims,
) => Promise<ToolOutput>;

export interface Backend<K extends BackendKind> {
  /**
   * What the call needs, resolved before the grant is consumed: a backend that cannot be reached
   * (no handler, no MCP server, an unreadable credential) throws here, and the grant stays usable
   * once the operator fixes it.
   */
  prepare(deps: BackendDeps, call: BackendCall<K>): BackendRun | Promise<BackendRun>;
}
