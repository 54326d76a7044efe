/**
 * The contract between Writ and an in-process tool backend: what a handler receives once its
 * grant is verified and consumed, and what it answers (shaped into the layered result).
 */
import type { ContentBlock } from "@modelcontextprotocol/client";
import type { StoredResource } from "../store/types.ts";

export interface ToolInvocation {
  args: Record<string, unknown>;
  resource: StoredResource | undefined;
}

export interface ToolOutput {
  summary: string;
  structured_content: Record<string, unknown>;
  /** Content items as an MCP server sent them (text, image, audio, resource, resource_link). */
  content?: ContentBlock[];
  /** The tool ran and reported its own failure (its content says why). */
  is_error?: boolean;
  /** What the tool touched, for the result's provenance. */
  target?: string;
  /** The resource revision after the tool ran, when it changed it. */
  resource_revision?: number;
}

export type InProcessHandler = (invocation: ToolInvocation) => Promise<ToolOutput>;

/** A progress report of a running call (MCP `notifications/progress` without its token). */
export interface CallProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** A log message a backend sent while the call ran (MCP `notifications/message`). */
export interface CallLogMessage {
  level: "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";
  logger?: string;
  data: unknown;
}

/** The requests an MCP server may send its client while a call runs (server-to-client). */
export type ClientRequestMethod = "sampling/createMessage" | "elicitation/create" | "roots/list";

/** A server-to-client request a backend sent while the call ran, for the call's caller. */
export interface ClientRequest {
  method: ClientRequestMethod;
  /** The request's params as the backend sent them (checked by the MCP SDK's schema of `method`). */
  params: Record<string, unknown>;
  /** The MCP server that sent it, and the contract of the call it came with. */
  server: string;
  contract: string;
}

/** The caller's answer to a `ClientRequest`: its result (unchecked), or the JSON-RPC error it sent. */
export type ClientAnswer = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

/**
 * A caller watching a call while it runs (an MCP client reading an SSE answer): the backend's
 * progress and log messages reach it, its server-to-client requests are asked of it (`request`:
 * resolves with the caller's answer, or rejects with a `WritError` when it was not asked), and aborting
 * `signal` cancels the call at the backend. Backends that cannot report or cancel ignore it; a
 * backend's request to an observer without `request` is refused.
 */
export interface CallObserver {
  signal?: AbortSignal;
  progress?(update: CallProgress): void;
  log?(message: CallLogMessage): void;
  /** Asks the caller `request`; `signal` aborts when the backend no longer waits for the answer. */
  request?(request: ClientRequest, signal: AbortSignal): Promise<ClientAnswer>;
  /**
   * A caller that can be handed an upstream MCP server's `input_required` rounds (a 2026-07-28
   * caller of `/mcp`); without it, the upstream client fulfils them itself or refuses the call.
   */
  input?: UpstreamInput;
}

/** An upstream's input rounds, forwarded to the caller and back (src/mcp/upstream-input.ts). */
export interface UpstreamInput {
  /** The round this call answers: the caller's `inputResponses`, the server's `requestState`. */
  continues?: { inputResponses?: Record<string, unknown> | undefined; requestState?: string | undefined };
  /** The caller's client capabilities, declared to the server for this call (what it can give). */
  capabilities: Record<string, unknown>;
  /** Told the server's next round; the call then ends without a result. */
  asked(round: UpstreamInputRound): void;
}

/** What an upstream server asked of the caller: its `inputRequests` and opaque `requestState`. */
export interface UpstreamInputRound {
  server: string;
  inputRequests: Record<string, unknown>;
  requestState?: string | undefined;
}
