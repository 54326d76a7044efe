/**
 * The HTTP layer's hono environment: per-request state that middleware sets once and handlers
 * read (`c.var.requestId`, `c.var.subject`), and the options the app is built with.
 */

import type { CodeModeConfig } from "../codemode/config.ts";
import type { SandboxPool } from "../codemode/index.ts";
import type { ConsoleSessionSettings } from "../console/session.ts";
import type { Subject } from "../core/types.ts";
import type { McpSessionsConfig } from "../mcp/config.ts";
import type { TransportSecurity } from "../mcp/transport-security.ts";
import type { RequestTracing } from "../observability/tracing.ts";

/** Set by `requestId()` on every `/v1`, `/mcp` and `/console` request. */
export interface RequestIdVariables {
  /** Writ's own id of the request (minted per request). */
  requestId: string;
  /** The caller's `X-Request-Id`, when it sent one within bounds. */
  callerRequestId?: string;
}

/** Set by `authenticate()` on the routes that need a verified caller. */
export interface SubjectVariables {
  subject: Subject;
}

/** The environment every route module is typed with. */
export interface HttpEnv {
  Variables: RequestIdVariables;
}

export interface Roles {
  reviewer: readonly string[];
  admin: readonly string[];
  approver: readonly string[];
  /** Roles that may reach across tenants (config `roles.platform`; none by default). */
  platform?: readonly string[];
}

export interface AppOptions {
  bodyLimitBytes: number;
  roles: Roles;
  /** Console session lifetimes (config `console`; default: 8 h, no idle timeout). */
  console?: ConsoleSessionSettings;
  /** Serve the MCP endpoint at /mcp (default true). */
  mcpEndpoint?: boolean;
  /** How long identical unauthenticated refusals of one source are summarized in one entry (default 10 s). */
  refusalWindowMs?: number;
  /** The hosts and origins /mcp answers to (default: loopback). */
  mcpSecurity?: TransportSecurity;
  /** Sessions for 2025-11-25 clients on /mcp (default off: stateless). */
  mcpSessions?: McpSessionsConfig;
  /** A span per /v1 and /mcp request (OpenTelemetry on); none when absent. */
  tracing?: RequestTracing;
  /** Code Mode (config `code_mode`; default: on, the sandbox's default limits). */
  codeMode?: CodeModeConfig;
  /** The threads Code Mode runs programs on (default: a pool of its own, per `codeMode`). */
  sandbox?: SandboxPool;
}
