/** `writ serve [--config file] [--port n]`: runs the gateway until SIGINT/SIGTERM. */
import { parseArgs } from "node:util";
import type { GatewayConfig } from "../config/index.ts";
import { ConfigError, loadConfig } from "../config/index.ts";
import { WritError } from "../core/errors.ts";
import { TelemetryConfigError } from "../observability/otel.ts";
import { PolicyLoadError } from "../policy/index.ts";
import { type GatewayParts, ListenError, startGateway } from "../server.ts";

/**
 * What `writ serve` prints once it listens: where everything is (the API, the console, the MCP
 * endpoint), which policy revision decides and from where, and the store, so that a newcomer
 * knows what to open next.
 */
export function startupLines(url: string, parts: GatewayParts): string[] {
  const { config, gateway, telemetry } = parts;
  const policy = config.policy.bundle ?? config.policy.dir;
  const lines = [
    `writ listening on ${url}`,
    `  API      ${url}/v1  (POST /v1/proposals, GET /v1/tools, GET /v1/decisions)`,
    `  console  ${url}/console  (sign in with a token: writ token --sub <id> --roles reviewer)`,
    config.mcp.endpoint ? `  MCP      ${url}/mcp` : "  MCP      off (mcp.endpoint: false)",
    `  policy   revision ${gateway.policy.revision}, ${config.policy.entrypoint} from ${policy}`,
    `  store    ${storeText(config.store)}`,
  ];
  if (telemetry) lines.push(`  OpenTelemetry: ${telemetry.description}`);
  return lines;
}

function storeText(store: GatewayConfig["store"]): string {
  if (store.postgres === undefined) return `SQLite ${store.sqlite ?? "(default file)"}`;
  try {
    const u = new URL(store.postgres.url);
    // The password stays out of the terminal and its scrollback.
    if (u.password) u.password = "***";
    return `PostgreSQL ${u.toString()}`;
  } catch {
    return "PostgreSQL";
  }
}

const usage = `usage: writ serve [--config <file>] [--port <n>]

Runs the gateway. Without --config it uses the embedded default (SQLite under .writ/, the
policies in policies/, the demo repository, the development token issuer).
  --config <file>   gateway configuration (YAML)
  --port <n>        listen on this port (also PORT in the environment; 0 picks a free one)`;

export async function serveCommand(argv: string[]): Promise<number> {
  let values: { config?: string | undefined; port?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: "string" },
        port: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    console.error(`writ serve: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return 2;
  }
  if (values.help) {
    console.log(usage);
    return 0;
  }
  const portText = values.port ?? process.env.PORT;
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535)) {
    console.error(`writ serve: the port must be a number from 0 to 65535, not ${JSON.stringify(portText)}`);
    return 2;
  }
  let running: Awaited<ReturnType<typeof startGateway>>;
  try {
    const config = await loadConfig(values.config);
    running = await startGateway(
      port === undefined ? config : { ...config, server: { ...config.server, port } },
    );
  } catch (error) {
    if (
      error instanceof ConfigError ||
      error instanceof PolicyLoadError ||
      error instanceof ListenError ||
      error instanceof TelemetryConfigError
    ) {
      console.error(`writ serve: ${error.message}`);
      return 1;
    }
    // E.g. the database cannot be reached or was migrated by a newer release.
    if (error instanceof WritError) {
      console.error(`writ serve: ${error.message}\n  what to do: ${error.suggestedFix}`);
      return 1;
    }
    throw error;
  }
  for (const line of startupLines(running.url, running.parts)) console.log(line);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await running.close();
  return 0;
}
