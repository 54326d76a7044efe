/** The gateway's HTTP listener: the configured address taken, or one line that says why not. */
import {
  createAdaptorServer,
  type Http2Bindings,
  type HttpBindings,
  type ServerType,
} from "@hono/node-server";
import type { GatewayConfig } from "../config/index.ts";
import { WritError } from "../core/errors.ts";

/** The listening address is taken: another process (or another Writ) holds the port. */
export class ListenError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = "ListenError";
  }
}

/** Listens on the configured host and port (0: a free one) with `fetch` answering requests. */
export async function listen(
  options: GatewayConfig["server"],
  fetch: (request: Request, env: HttpBindings | Http2Bindings) => Response | Promise<Response>,
): Promise<{ server: ServerType; port: number }> {
  const server = createAdaptorServer({
    fetch,
    hostname: options.host,
    serverOptions: {
      requestTimeout: options.request_timeout_ms,
      headersTimeout: Math.min(options.headers_timeout_ms, options.request_timeout_ms),
      keepAliveTimeout: options.keep_alive_timeout_ms,
      // How often Node looks for requests past their timeouts (its default is 30 s).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, options.request_timeout_ms / 4)),
    },
  });
  const where = `${options.host}:${options.port}`;
  const port = await new Promise<number>((resolve, reject) => {
    // Kept after listening too (as before): a later server error is then not an unhandled event.
    server.on("error", (error: NodeJS.ErrnoException) => {
      const reason =
        error.code === "EADDRINUSE"
          ? `port ${options.port} on ${options.host} is already in use; stop the process that holds it, or choose another port with --port <n> or PORT=<n> (0 picks a free one)`
          : error.code === "EACCES"
            ? `not allowed to listen on ${where}; choose a port above 1023 with --port <n> or PORT=<n>`
            : error.code === "EADDRNOTAVAIL"
              ? `cannot listen on ${where}: ${options.host} is not an address of this machine; fix server.host in the configuration`
              : `cannot listen on ${where}: ${error.message}`;
      reject(new ListenError(reason, error.code));
    });
    server.listen(options.port, options.host, () => {
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : options.port);
    });
  });
  return { server, port };
}

export function closeServer(server: ServerType): Promise<void> {
  return new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The answer while the gateway is still being built (policy compiling, upstreams connecting). */
export function starting(): Response {
  const error = new WritError("backend_unavailable", "Writ is starting", {
    suggestedFix: "retry in a second",
    retryable: true,
    effectCommitted: false,
  });
  return Response.json(error.toJSON(), { status: error.httpStatus, headers: { "retry-after": "1" } });
}
