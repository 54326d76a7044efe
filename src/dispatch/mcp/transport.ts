/**
 * The client transport Writ opens to a configured MCP server: its stdio child, or Streamable HTTP
 * (over fetch.ts) with the server's credentials, resolved per request and only here.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { CredentialResolver } from "../credentials.ts";
import type { McpServerConfig } from "./config.ts";
import { upstreamFetch } from "./fetch.ts";

/**
 * How Writ picks an upstream's protocol revision (the gateway's connections and `writ contracts
 * import` alike), from the server's `protocol_version`: `auto` is the SDK's negotiation, which
 * probes with `server/discover` and speaks 2026-07-28 to a server that offers it (no
 * `initialize`; the `_meta` envelope on every request), and falls back to the 2025 `initialize`
 * handshake otherwise (a stdio server is probed in a short-lived sibling process, so a server that
 * exits on the probe is simply a 2025 server); a pinned revision skips the probe.
 */
export function upstreamNegotiation(version: McpServerConfig["protocol_version"]): {
  mode: "auto" | "legacy" | { pin: string };
} {
  if (version === "auto") return { mode: "auto" };
  return version === "2025-11-25" ? { mode: "legacy" } : { mode: { pin: version } };
}

export interface TransportOptions {
  credentials?: Pick<CredentialResolver, "resolve">;
  /** Static headers sent with every request to an HTTP server (`writ contracts import --header`). */
  headers?: Readonly<Record<string, string>>;
  /** A stdio server's standard error: the gateway's own, or a stream to read (`pipe`). */
  stderr: "inherit" | "pipe";
}

/** The client transport for a configured server: its stdio child, or Streamable HTTP with its credentials. */
export function upstreamTransport(
  config: McpServerConfig,
  options: TransportOptions,
): StdioClientTransport | StreamableHTTPClientTransport {
  if (config.transport === "stdio") {
    return new StdioClientTransport({
      command: config.command,
      args: config.args,
      env: { ...getDefaultEnvironment(), ...config.env },
      ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
      stderr: options.stderr,
    });
  }
  const ref = config.credentials_ref;
  const { credentials, headers: fixed } = options;
  // Credentials are resolved per request (a rotated secret file is picked up) and only here.
  const withCredentials: typeof fetch = async (input, init) => {
    if ((ref === undefined || credentials === undefined) && fixed === undefined)
      return upstreamFetch(input, init);
    const headers = new Headers(init?.headers);
    for (const [header, value] of Object.entries(fixed ?? {})) headers.set(header, value);
    if (ref !== undefined && credentials !== undefined) {
      for (const [header, value] of Object.entries(await credentials.resolve(ref)))
        headers.set(header, value);
    }
    return upstreamFetch(input, { ...init, headers });
  };
  return new StreamableHTTPClientTransport(new URL(config.url), { fetch: withCredentials });
}
