/**
 * The MCP transport's DNS-rebinding protection (MCP spec, "Security Warning" of Streamable HTTP:
 * servers must validate the Origin header): a request to `/mcp` whose Host, or whose Origin when
 * it sends one, is not on the configured allow-lists is refused with 403 before anything else
 * runs. Clients that are not browsers send no Origin and are judged by their Host alone.
 *
 * Allow-list entries are host names (`localhost`, `writ.internal`, `::1`) or, for origins,
 * `scheme://host` (any port) and `scheme://host:port` (that port); `*` allows any. The default is
 * loopback only, which is what `npm start` serves.
 *
 * The endpoint's protected resource metadata (`/.well-known/oauth-protected-resource[/mcp]`) names
 * the resource from the request's Host when `mcp.resource` is not configured, so it answers only
 * the Hosts `/mcp` answers (`allowedHost`): `Host: evil.example` must not make Writ vouch for
 * `http://evil.example/mcp`. Its Origin is not checked: it is public, read-only metadata that
 * browser clients fetch across origins.
 */
import type { MiddlewareHandler } from "hono";
import { WritError } from "../core/errors.ts";

export const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "::1"] as const;
export const LOOPBACK_ORIGINS = LOOPBACK_HOSTS.flatMap((h) => {
  const host = h.includes(":") ? `[${h}]` : h;
  return [`http://${host}`, `https://${host}`];
});

export interface TransportSecurity {
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
}

/** The host name of a Host header (`example.com:8080` → `example.com`, `[::1]:80` → `::1`). */
function hostnameOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  } catch {
    return undefined;
  }
}

function hostAllowed(host: string | undefined, allowed: readonly string[]): boolean {
  if (allowed.includes("*")) return true;
  const name = host === undefined ? undefined : hostnameOf(host);
  return name !== undefined && allowed.some((a) => a.replace(/^\[|\]$/g, "").toLowerCase() === name);
}

function originAllowed(origin: string, allowed: readonly string[]): boolean {
  if (allowed.includes("*")) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return allowed.some((entry) => {
    let want: URL;
    try {
      want = new URL(entry);
    } catch {
      return false;
    }
    if (want.protocol !== url.protocol || want.hostname.toLowerCase() !== url.hostname.toLowerCase())
      return false;
    // An entry without a port allows any port; with one, only that port.
    return /:\d+$/.test(entry.replace(/\/$/, "")) ? want.port === url.port : true;
  });
}

/** A refusal as a JSON-RPC error (what an MCP client reads). */
function forbidden(error: WritError): Response {
  const { message } = error;
  return new Response(
    JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message, data: error.toJSON() }, id: null }),
    { status: 403, headers: { "content-type": "application/json" } },
  );
}

function hostRefusal(host: string | undefined): WritError {
  return new WritError(
    "forbidden",
    `the Host ${JSON.stringify(host ?? "")} is not allowed to reach the MCP endpoint`,
    {
      suggestedFix:
        "call Writ by a host name listed under mcp.allowed_hosts in its configuration (loopback by default)",
    },
  );
}

/** Refuses `/mcp` requests from hosts or origins that are not allowed. */
export function transportSecurity(config: TransportSecurity): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host");
    if (!hostAllowed(host, config.allowedHosts)) return forbidden(hostRefusal(host));
    const origin = c.req.header("origin");
    if (origin !== undefined && !originAllowed(origin, config.allowedOrigins)) {
      return forbidden(
        new WritError(
          "forbidden",
          `the Origin ${JSON.stringify(origin)} is not allowed to reach the MCP endpoint`,
          {
            suggestedFix:
              "add the web page's origin to mcp.allowed_origins in Writ's configuration, or call from a non-browser client",
          },
        ),
      );
    }
    await next();
  };
}

/** Refuses (403, a WritError) requests whose Host `/mcp` would refuse: for its metadata. */
export function allowedHost(config: Pick<TransportSecurity, "allowedHosts">): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host");
    if (!hostAllowed(host, config.allowedHosts)) throw hostRefusal(host);
    await next();
  };
}
