/**
 * The `mcp:` section of the gateway config: the upstream MCP servers Writ connects to as a client
 * (a contract's `backend: {kind: mcp, server, tool}` names one; their schema is the client's,
 * src/dispatch/mcp/config.ts), and whether Writ serves its own MCP endpoint at `/mcp`.
 */
import { z } from "zod";
import { mcpServerSchema } from "../dispatch/mcp/config.ts";
import { LOOPBACK_HOSTS, LOOPBACK_ORIGINS } from "./transport-security.ts";

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]"]);

export const mcpSessionsConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(false).describe("Issue Mcp-Session-Id to 2025-11-25 clients at initialize"),
    /** The `retry` (ms) of each SSE stream's priming event: how long a client waits to reconnect. */
    retry_ms: z.number().int().positive().default(1000),
    /** The most SSE events kept per session for resumption (`Last-Event-ID`); older ones go. */
    max_events: z.number().int().positive().default(1000),
    /**
     * SSE polling (SEP-1699): a session's `tools/call` stream still unanswered this long after its
     * priming event is closed, and the client resumes it with `Last-Event-ID` (no connection held
     * through a long call). Absent: a stream stays open until the answer.
     */
    poll_after_ms: z.number().int().nonnegative().optional(),
  })
  .describe("Sessions for 2025-11-25 MCP clients, kept in the store");

export type McpSessionsConfig = z.output<typeof mcpSessionsConfigSchema>;

export const mcpConfigSchema = z
  .strictObject({
    /** Serve Writ's own MCP endpoint at /mcp (every configured tool, filtered per caller). */
    endpoint: z.boolean().default(true).describe("Serve the MCP endpoint at /mcp"),
    servers: z.array(mcpServerSchema).default([]).describe("Upstream MCP servers"),
    /** How long to wait for an upstream to connect and list its tools at start. */
    connect_timeout_ms: z.number().int().positive().default(10_000),
    /** DNS-rebinding protection: the Host names /mcp answers to (`*`: any). */
    allowed_hosts: z
      .array(z.string().min(1))
      .default([...LOOPBACK_HOSTS])
      .describe("Host names the MCP endpoint answers to (default: loopback; '*' for any)"),
    /** Browser origins allowed to call /mcp (`scheme://host` any port, `scheme://host:port`, `*`). */
    allowed_origins: z
      .array(z.string().min(1))
      .default([...LOOPBACK_ORIGINS])
      .describe("Origins allowed to call the MCP endpoint (default: loopback pages; '*' for any)"),
    /**
     * The endpoint's canonical URI (RFC 8707 / RFC 9728), e.g. `https://writ.example.com/mcp`. When
     * set, tokens presented at /mcp must name it in `aud`, and the protected resource metadata and
     * 401 challenges use it instead of the URL the request arrived at.
     */
    resource: z
      .url({ protocol: /^https?$/, error: "must be an absolute http or https URL" })
      .refine((uri) => !uri.includes("#"), { error: "must not have a fragment (RFC 8707)" })
      .refine((uri) => new URL(uri).protocol === "https:" || LOOPBACK_NAMES.has(new URL(uri).hostname), {
        error: "must use https (plain http only on localhost, 127.0.0.1 or [::1])",
      })
      .optional()
      .describe("Canonical URI of /mcp; tokens there must carry it in aud (RFC 8707)"),
    /**
     * Sessions for 2025-11-25 clients (`Mcp-Session-Id`, the GET stream, `resources/subscribe`,
     * resumption with `Last-Event-ID`), kept in the store (src/mcp/sessions.ts). Off: /mcp is
     * stateless, as a 2026-07-28 client always finds it.
     */
    sessions: mcpSessionsConfigSchema.prefault({}),
    /** The scopes a client should request for /mcp (RFC 9728 `scopes_supported`, the 401's `scope`). */
    scopes_supported: z
      .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, { error: "must be an OAuth scope token" }))
      .min(1)
      .optional()
      .describe("OAuth scopes a client should request for /mcp"),
  })
  .superRefine((config, context) => {
    const seen = new Set<string>();
    for (const [index, server] of config.servers.entries()) {
      if (seen.has(server.name)) {
        context.addIssue({
          code: "custom",
          path: ["servers", index, "name"],
          message: `a second MCP server named ${JSON.stringify(server.name)}; names must be unique`,
        });
      }
      seen.add(server.name);
    }
  })
  .describe("MCP: the upstream servers Writ fronts, and Writ's own endpoint");

export type McpConfig = z.output<typeof mcpConfigSchema>;

/** Where a caller names an approved approval request when it calls the tool again. */
export const APPROVAL_META_KEY = "writ/approval";
/** Where Writ puts the result's provenance and decision on a `tools/call` answer. */
export const RESULT_META_KEY = "writ/result";
/** Where Writ puts its structured error when a tool reported its own failure (`isError` content). */
export const ERROR_META_KEY = "writ/error";
