/**
 * The MCP SDK's v2 client (`@modelcontextprotocol/client`), connected to a Writ gateway's /mcp
 * with a bearer token and pinned to the 2026-07-28 revision (its `server/discover` probe, then
 * every request with its `_meta` envelope); and a raw 2026-07-28 request for wire-level checks.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  Client,
  PROTOCOL_VERSION_META_KEY,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";

export const MODERN_REVISION = "2026-07-28";

export async function connectModernMcp(
  gatewayUrl: string,
  token: string,
  name = "writ-v2-test",
  /** The transport's fetch (to watch what the client sends). */
  fetch?: typeof globalThis.fetch,
): Promise<Client> {
  const client = new Client(
    { name, version: "1.0.0" },
    { versionNegotiation: { mode: { pin: MODERN_REVISION } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      ...(fetch === undefined ? {} : { fetch }),
    }),
  );
  return client;
}

/** The `_meta` envelope a 2026-07-28 request carries (`revision` claimed). */
export function envelope(revision = MODERN_REVISION): Record<string, unknown> {
  return {
    [PROTOCOL_VERSION_META_KEY]: revision,
    [CLIENT_INFO_META_KEY]: { name: "raw-test", version: "1.0.0" },
    [CLIENT_CAPABILITIES_META_KEY]: {},
  };
}

/**
 * A raw 2026-07-28 request to a gateway's /mcp: `params._meta` gets the envelope (what `meta`
 * adds wins), and the standard headers agree with the body unless `headers` says otherwise.
 */
export function postModern(
  gatewayUrl: string,
  token: string | undefined,
  request: {
    id?: number | string;
    method: string;
    params?: Record<string, unknown>;
    meta?: Record<string, unknown>;
    /** Changes the body's text before it is sent (e.g. to repeat a key). */
    edit?: (text: string) => string;
    /** Aborts the request (the caller going away). */
    signal?: AbortSignal;
  },
  headers: Record<string, string> = {},
): Promise<Response> {
  const params = request.params ?? {};
  const meta = { ...envelope(), ...request.meta };
  const named = [params.name, params.uri, params.taskId].find((value) => typeof value === "string");
  const name = typeof named === "string" ? named : undefined;
  return fetch(`${gatewayUrl}/mcp`, {
    method: "POST",
    ...(request.signal === undefined ? {} : { signal: request.signal }),
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version":
        typeof meta[PROTOCOL_VERSION_META_KEY] === "string"
          ? String(meta[PROTOCOL_VERSION_META_KEY])
          : MODERN_REVISION,
      "mcp-method": request.method,
      ...(name === undefined ? {} : { "mcp-name": name }),
      ...headers,
    },
    body: (request.edit ?? ((text: string) => text))(
      JSON.stringify({
        jsonrpc: "2.0",
        id: request.id ?? 1,
        method: request.method,
        params: { ...params, _meta: meta },
      }),
    ),
  });
}
