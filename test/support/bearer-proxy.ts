/**
 * A loopback HTTP proxy that adds `authorization: Bearer <token>` to every request and forwards
 * everything else as it came: method, path, body, and every header (Host and Origin included,
 * so the target judges them exactly as the client sent them). Responses are streamed back as
 * they arrive, Server-Sent Events included. For clients that cannot send a header of their own,
 * such as the MCP conformance suite.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";

export interface BearerProxy {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  close(): Promise<void>;
}

/** The request's headers as sent, with its authorization replaced by `authorization`. */
function forwardedHeaders(headers: IncomingHttpHeaders, authorization: string): IncomingHttpHeaders {
  const { authorization: _dropped, ...rest } = headers;
  return { ...rest, authorization };
}

export async function startBearerProxy(target: string, token: string): Promise<BearerProxy> {
  const to = new URL(target);
  const server = createServer((incoming, outgoing) => {
    const forwarded = httpRequest(
      {
        protocol: to.protocol,
        hostname: to.hostname,
        port: to.port,
        method: incoming.method,
        path: incoming.url,
        headers: forwardedHeaders(incoming.headers, `Bearer ${token}`),
        agent: false,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        // Flushed as they come, so an event stream reaches the client event by event.
        outgoing.flushHeaders();
        answer.pipe(outgoing);
      },
    );
    forwarded.on("error", (error) => {
      if (outgoing.headersSent) outgoing.destroy(error);
      else outgoing.writeHead(502, { "content-type": "text/plain" }).end(`proxy: ${error.message}`);
    });
    outgoing.on("close", () => forwarded.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
