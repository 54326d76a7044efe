/**
 * The `mcp:` section of the gateway config: the upstream MCP servers Writ connects to as a client
 * (a contract's `backend: {kind: mcp, server, tool}` names one), and whether Writ serves its own
 * MCP endpoint at `/mcp`.
 */
import { z } from "zod";
import { LOOPBACK_HOSTS, LOOPBACK_ORIGINS } from "./transport-security.ts";

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]"]);

const serverNamePattern = /^[A-Za-z0-9_.-]+$/;

/**
 * `contracts: import`: the server's tools, resources and prompts get contracts from its own lists,
 * re-read whenever they change, so that new tools appear without a hand edit (the policy still
 * decides every call). Imported tools are `committing` with `idempotency: none` unless
 * `trust_hints: true` takes those fields from the server's annotations (its claims about itself).
 */
const contractsOptionSchema = z
  .union([
    z.literal("import"),
    z.strictObject({
      import: z.literal(true),
      trust_hints: z
        .boolean()
        .default(false)
        .describe(
          "Take side_effect and idempotency from the server's readOnlyHint, destructiveHint and idempotentHint",
        ),
    }),
  ])
  .optional()
  .describe(
    "import: contracts for the server's tools, resources and prompts from its own lists (configured contracts win)",
  );

const stdioServerSchema = z
  .strictObject({
    name: z.string().regex(serverNamePattern, { error: 'must be letters, digits, "_", "." or "-"' }),
    transport: z.literal("stdio"),
    command: z.string().min(1).describe("Executable that runs the MCP server"),
    args: z.array(z.string()).default([]).describe("Its command-line arguments"),
    env: z
      .record(z.string(), z.string())
      .default({})
      .describe("Extra environment variables (added to a minimal inherited environment)"),
    cwd: z.string().min(1).optional().describe("Working folder (default: the current folder)"),
    contracts: contractsOptionSchema,
  })
  .describe("An MCP server Writ starts as a child process and talks to over stdin/stdout");

const httpServerSchema = z
  .strictObject({
    name: z.string().regex(serverNamePattern, { error: 'must be letters, digits, "_", "." or "-"' }),
    transport: z.literal("http"),
    url: z
      .url({ protocol: /^https?$/, error: "must be an http or https URL" })
      .describe("Streamable HTTP endpoint"),
    credentials_ref: z
      .string()
      .min(1)
      .optional()
      .describe("Name of the credentials Writ sends to this server (never shown to callers)"),
    contracts: contractsOptionSchema,
  })
  .describe("An MCP server reached over Streamable HTTP");

export const mcpServerSchema = z.discriminatedUnion("transport", [stdioServerSchema, httpServerSchema]);

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
export type McpServerConfig = z.output<typeof mcpServerSchema>;

/** Whether `server` imports its contracts (`contracts: import`), and whether its hints are trusted. */
export function contractImport(server: McpServerConfig): { trustHints: boolean } | undefined {
  const option = server.contracts;
  if (option === undefined) return undefined;
  return { trustHints: option !== "import" && option.trust_hints };
}

/** Where the grant travels on a `tools/call` to an upstream MCP server. */
export const GRANT_META_KEY = "writ/grant";
/** Where a caller names an approved approval request when it calls the tool again. */
export const APPROVAL_META_KEY = "writ/approval";
/** Where Writ puts the result's provenance and decision on a `tools/call` answer. */
export const RESULT_META_KEY = "writ/result";
/** Where Writ puts its structured error when a tool reported its own failure (`isError` content). */
export const ERROR_META_KEY = "writ/error";
