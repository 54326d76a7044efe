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
