/** The official SDK's MCP client, connected to a Writ gateway's /mcp with a bearer token. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export async function connectMcp(gatewayUrl: string, token: string, name = "writ-test"): Promise<Client> {
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/**
 * A raw JSON-RPC POST to a gateway's /mcp with a bearer token. It accepts JSON only unless
 * `headers` says otherwise (a tools/call from a caller that accepts SSE may be answered as a stream:
 * src/mcp/lazy-stream.ts).
 */
export function postMcp(
  gatewayUrl: string,
  token: string,
  body: unknown,
  options: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${gatewayUrl}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json",
      ...options.headers,
    },
    body: JSON.stringify(body),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/**
 * An answer's text without what differs between two runs of the same call (new ids, times,
 * durations), so that two answers can be compared byte for byte.
 */
export function withoutRunIds(text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<uuid>")
    .replace(/\b[0-9A-HJKMNP-TV-Z]{26}\b/g, "<ulid>")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>")
    .replace(/"(latency_ms|duration_ms|elapsed_ms)":[0-9.]+/g, '"$1":0');
}
