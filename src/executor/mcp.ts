/**
 * `grantRequired`: the grant check for a tool of an MCP server built with the official SDK (the v2
 * packages' `McpServer`, or v1's: both put the request's `_meta` where this reads it). Wrap
 * a tool's handler with it; on every `tools/call` the grant Writ sends in `_meta["writ/grant"]`
 * is verified against the arguments received (signature, issuer, audience, action, resource,
 * args digest, single use) before the handler runs. A refusal is a tool execution error
 * (`isError: true`) whose `structuredContent.error` follows Writ's error protocol, so the
 * gateway (and any caller) sees why.
 *
 *   server.registerTool("read_note", { inputSchema: { id: z.string() } },
 *     grantRequired({ issuer: "writ", audience: "mcp:notes", keys: jwksUrl,
 *                     action: { name: "notes.read" } },
 *       async (args, extra, grant) => ({ content: [...] })));
 *
 * The arguments checked are the ones the handler receives: give tools input schemas that neither
 * add defaults nor strip fields, or the digest (rightly) no longer matches.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { WritError } from "../core/errors.ts";
import type { GrantClaims } from "../core/types.ts";
import { GrantError, grantErrorDisposition } from "./errors.ts";
import { MemoryReplayCache, type ReplayGuard } from "./replay.ts";
import { type VerifyGrantOptions, verifyGrant } from "./verify.ts";

/** The `_meta` key Writ puts the grant under. */
export const MCP_GRANT_META_KEY = "writ/grant";

type RequestMeta = Readonly<Record<string, unknown>>;

/**
 * A tool handler's second argument, as far as the guard reads it: the v2 SDK's `ServerContext`
 * (the request's `_meta` at `ctx.mcpReq._meta`) or the v1 SDK's `RequestHandlerExtra` (at
 * `extra._meta`).
 */
export type McpToolExtra = { mcpReq: { _meta?: RequestMeta } } | { _meta?: RequestMeta };

/** A refused call: a tool execution error carrying Writ's error protocol. */
export type GrantRefusal = {
  isError: true;
  content: { type: "text"; text: string }[];
  structuredContent: { error: ReturnType<WritError["toJSON"]>; code: string };
};

type ActionRef = NonNullable<VerifyGrantOptions["action"]>;
type ResourceRef = NonNullable<VerifyGrantOptions["resource"]>;

export interface GrantRequiredOptions<Args>
  extends Omit<VerifyGrantOptions, "args" | "action" | "resource" | "resourceRevision" | "replay" | "now"> {
  /** The canonical action this tool performs (the contract's name, optionally its version). */
  action: ActionRef;
  /** The resource a call touches, read from its arguments. */
  resource?: (args: Args) => ResourceRef | undefined;
  /**
   * The revision of a call's resource as this server reads it now (`null`: it does not exist):
   * a grant decided on another revision is refused `stale_revision`.
   */
  resourceRevision?: (resource: ResourceRef) => string | number | null | Promise<string | number | null>;
  /** Single use; defaults to a `MemoryReplayCache` owned by this wrapper. */
  replay?: ReplayGuard | false;
}

/** The handler's result type is its own (the v1 and v2 SDKs' `CallToolResult` differ a little). */
export function grantRequired<
  Args extends Record<string, unknown>,
  Result extends object = CallToolResult,
  Extra extends McpToolExtra = McpToolExtra,
>(
  options: GrantRequiredOptions<Args>,
  handler: (args: Args, extra: Extra, grant: GrantClaims) => Result | Promise<Result>,
): (args: Args, extra: Extra) => Promise<Result | GrantRefusal> {
  const replay = options.replay === undefined ? new MemoryReplayCache() : options.replay;
  return async (args, extra) => {
    const meta = "mcpReq" in extra ? extra.mcpReq._meta : extra._meta;
    const token = meta?.[MCP_GRANT_META_KEY];
    let claims: GrantClaims;
    try {
      if (typeof token !== "string" || token === "") {
        throw new GrantError(
          "missing_grant",
          "no grant was presented",
          `call this tool through Writ, which sends the grant in _meta["${MCP_GRANT_META_KEY}"]`,
        );
      }
      const resource = options.resource?.(args);
      claims = await verifyGrant(token, {
        issuer: options.issuer,
        audience: options.audience,
        keys: options.keys,
        action: options.action,
        resource,
        ...(resource !== undefined && options.resourceRevision !== undefined
          ? { resourceRevision: await options.resourceRevision(resource) }
          : {}),
        args,
        replay,
        clockToleranceSeconds: options.clockToleranceSeconds,
      });
    } catch (error) {
      if (error instanceof GrantError) return refusal(error);
      throw error;
    }
    return handler(args, extra, claims);
  };
}

function refusal(error: GrantError): GrantRefusal {
  const { category } = grantErrorDisposition(error.code);
  const body = new WritError(category, error.problem, {
    suggestedFix: error.suggestedFix,
    retryable: error.code === "unavailable",
  }).toJSON();
  return {
    isError: true,
    content: [
      { type: "text", text: `grant refused (${error.code}): ${error.problem}; ${error.suggestedFix}` },
    ],
    structuredContent: { error: body, code: error.code },
  };
}
