/**
 * One upstream MCP server of the `mcp.servers` section: how Writ reaches it as a client (stdio or
 * Streamable HTTP), and whether its contracts are imported from its catalog. The rest of the
 * `mcp:` section (Writ's own endpoint) is src/mcp/config.ts.
 */
import { z } from "zod";

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

/**
 * Which protocol revision Writ speaks to the server: `auto` (the default) negotiates it at each
 * connect (a `server/discover` probe, the 2025 handshake when the server does not answer it;
 * for a stdio server the probe runs in a short-lived second process, so each connect starts it
 * twice); a revision pins it and skips the probe (`2025-11-25`: the 2025 handshake only;
 * `2026-07-28`: that revision or a connect error).
 */
const protocolVersionSchema = z
  .enum(["auto", "2025-11-25", "2026-07-28"])
  .default("auto")
  .describe("Protocol revision: auto (negotiated at connect), 2025-11-25 or 2026-07-28 (pinned, no probe)");

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
    protocol_version: protocolVersionSchema,
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
    protocol_version: protocolVersionSchema,
    contracts: contractsOptionSchema,
  })
  .describe("An MCP server reached over Streamable HTTP");

export const mcpServerSchema = z.discriminatedUnion("transport", [stdioServerSchema, httpServerSchema]);

export type McpServerConfig = z.output<typeof mcpServerSchema>;

/** Whether `server` imports its contracts (`contracts: import`), and whether its hints are trusted. */
export function contractImport(server: McpServerConfig): { trustHints: boolean } | undefined {
  const option = server.contracts;
  if (option === undefined) return undefined;
  return { trustHints: option !== "import" && option.trust_hints };
}

/** Where the grant travels on a `tools/call` to an upstream MCP server. */
export const GRANT_META_KEY = "writ/grant";
