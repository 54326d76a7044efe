/** `writ serve [--config file] [--port n]`: runs the gateway until SIGINT/SIGTERM. */
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../config/index.ts";
import { WritError } from "../core/errors.ts";
import { TelemetryConfigError } from "../observability/otel.ts";
import { PolicyLoadError } from "../policy/index.ts";
import { ListenError, startGateway } from "../server.ts";

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
  console.log(`writ listening on ${running.url} (policy revision ${running.gateway.policy.revision})`);
  const telemetry = running.parts.telemetry;
  if (telemetry) console.log(`OpenTelemetry: ${telemetry.description}`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await running.close();
  return 0;
}
