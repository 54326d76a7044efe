/**
 * An MCP server's catalog: `listCatalog` lists it on a connected client (the gateway's upstreams
 * at connect and on a change), `readServerCatalog` looks once for `writ contracts import`: connect
 * as a client (the transports the gateway's upstreams use), list the tools, resources, resource
 * templates and prompts, and close. Every way this can fail is a WritError that says what to do: a command that
 * cannot start, a URL that refuses, a server that does not speak MCP, one that does not answer.
 */
import {
  Client,
  type Prompt,
  type Resource,
  type ResourceTemplateType as ResourceTemplate,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  type Tool,
} from "@modelcontextprotocol/client";
import { errorMessage, WritError } from "../../core/errors.ts";
import type { McpServerConfig } from "./config.ts";
import { upstreamNegotiation, upstreamTransport } from "./transport.ts";

/** What a server offers right now: its tools, resources, resource templates and prompts. */
export interface Catalog {
  tools: Map<string, Tool>;
  resources: Resource[];
  templates: ResourceTemplate[];
  prompts: Prompt[];
}

/** A connected server's tools, resources, resource templates and prompts, as it listed them. */
export interface UpstreamCatalog {
  server: string;
  tools: readonly Tool[];
  resources: readonly Resource[];
  templates: readonly ResourceTemplate[];
  prompts: readonly Prompt[];
}

/**
 * A server's catalog: its tools, and its resources, templates and prompts when it declares them.
 * The SDK walks every page of each list. The catalog is listed only when it must be fresh (at
 * connect and when the server says a list changed; Writ has no refresh interval), so each list
 * bypasses the client's response cache: a 2026-07-28 server's `ttlMs` would only let a re-list
 * after a change read the old list. `cacheScope` does not matter here: the catalog is Writ's one
 * view of the server, under Writ's own credentials, never a caller's (discovery decides per caller
 * what each sees).
 */
export async function listCatalog(client: Client, timeoutMs: number): Promise<Catalog> {
  const options = { timeout: timeoutMs, cacheMode: "refresh" } as const;
  const capabilities = client.getServerCapabilities();
  const { tools } = await client.listTools(undefined, options);
  const resources = capabilities?.resources ? (await client.listResources(undefined, options)).resources : [];
  const templates = capabilities?.resources
    ? (await client.listResourceTemplates(undefined, options)).resourceTemplates
    : [];
  const prompts = capabilities?.prompts ? (await client.listPrompts(undefined, options)).prompts : [];
  return { tools: new Map(tools.map((tool) => [tool.name, tool])), resources, templates, prompts };
}

/** A server's catalog as it listed it, and what it says it is. */
export interface ServerCatalog {
  /** The server's `serverInfo` from `initialize`. */
  info: { name: string; version: string };
  tools: Tool[];
  resources: Catalog["resources"];
  templates: Catalog["templates"];
  prompts: Catalog["prompts"];
}

export interface ReadCatalogOptions {
  /** How long the server may take to start, answer `initialize` and each list. */
  timeoutMs: number;
  /** Static headers for an HTTP server (e.g. its own authorization). */
  headers?: Readonly<Record<string, string>>;
}

/** The last part of a stdio server's standard error, for an error message. */
const STDERR_KEPT = 2000;

/** Lists `config`'s catalog once; throws a WritError (`backend_unavailable` or `timeout`) when it cannot. */
export async function readServerCatalog(
  config: McpServerConfig,
  options: ReadCatalogOptions,
): Promise<ServerCatalog> {
  const transport = upstreamTransport(config, {
    stderr: "pipe",
    ...(options.headers === undefined ? {} : { headers: options.headers }),
  });
  let stderr = "";
  if ("stderr" in transport) {
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_KEPT);
    });
  }
  const client = new Client(
    { name: "writ-contracts-import", version: "0.1.0" },
    { capabilities: {}, versionNegotiation: upstreamNegotiation(config.protocol_version) },
  );
  try {
    await client.connect(transport, { timeout: options.timeoutMs });
    const catalog = await listCatalog(client, options.timeoutMs);
    const info = client.getServerVersion();
    return {
      info: { name: info?.name ?? "", version: info?.version ?? "" },
      tools: [...catalog.tools.values()],
      resources: catalog.resources,
      templates: catalog.templates,
      prompts: catalog.prompts,
    };
  } catch (error) {
    throw catalogFailure(config, error, stderr.trim(), options.timeoutMs);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** What the server is, as a message names it. */
function describe(config: McpServerConfig): string {
  return config.transport === "stdio"
    ? `the command ${JSON.stringify([config.command, ...config.args].join(" "))}`
    : `the MCP server at ${config.url}`;
}

/** The system error's code (ENOENT, ECONNREFUSED, …) under the SDK's own errors, if any. */
function codeOf(error: unknown): string | undefined {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    const code: unknown = Reflect.get(cause, "code");
    if (typeof code === "string" && !(cause instanceof SdkError)) return code;
  }
  return undefined;
}

function catalogFailure(
  config: McpServerConfig,
  error: unknown,
  stderr: string,
  timeoutMs: number,
): WritError {
  const what = describe(config);
  const said = stderr === "" ? "" : `; it wrote to standard error:\n${stderr}`;
  const unavailable = (message: string, suggestedFix: string) =>
    new WritError("backend_unavailable", message, { suggestedFix, retryable: false, cause: error });
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
    return new WritError("timeout", `${what} did not answer within ${timeoutMs} ms${said}`, {
      suggestedFix:
        config.transport === "stdio"
          ? "check that the command starts an MCP server on standard input and output (run it by hand), or give it longer with --timeout"
          : "check that the URL is the server's Streamable HTTP endpoint, or give it longer with --timeout",
      retryable: true,
      cause: error,
    });
  }
  if (config.transport === "stdio") {
    if (codeOf(error) === "ENOENT") {
      return unavailable(
        `cannot start ${what}: ${JSON.stringify(config.command)} is not a program on the PATH`,
        "check the command line given to --stdio (a package from npm runs as npx -y <package>)",
      );
    }
    if (codeOf(error) === "EACCES") {
      return unavailable(
        `cannot start ${what}: permission denied`,
        "make the program executable, or run it through its interpreter (node, python, …)",
      );
    }
    return unavailable(
      `${what} did not answer as an MCP server (${errorMessage(error)})${said}`,
      "check that the command starts an MCP server speaking MCP on standard input and output: run it by hand and read its errors",
    );
  }
  if (error instanceof SdkHttpError) {
    return unavailable(
      `${what} did not answer as an MCP server: HTTP ${error.status} (${errorMessage(error)})`,
      "give the server's Streamable HTTP endpoint (often a path ending in /mcp), and the headers it needs with --header",
    );
  }
  const code = codeOf(error);
  if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EHOSTUNREACH" || code === "ECONNRESET") {
    return unavailable(
      `cannot reach ${what}: ${code === "ENOTFOUND" ? "no such host" : code === "ECONNRESET" ? "the connection was reset" : "the connection was refused"}`,
      "check the URL and that the server is running and reachable from here",
    );
  }
  return unavailable(
    `${what} did not answer as an MCP server (${errorMessage(error)})`,
    "give the server's Streamable HTTP endpoint (often a path ending in /mcp); a page or another API is not an MCP server",
  );
}
