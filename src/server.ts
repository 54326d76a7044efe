/**
 * Assembles a gateway from its configuration and serves it over HTTP. Each part starts in a step
 * of `src/assembly/` (`parts.ts`; the policy engines in `policy.ts`, the listener in `listen.ts`).
 */

import type { Hono } from "hono";
import { type Closers, closeAll } from "./assembly/closers.ts";
import { closeServer, ListenError, listen, starting } from "./assembly/listen.ts";
import {
  seedHandlers,
  startGrants,
  startIdentity,
  startLog,
  startPolicy,
  startShadow,
  startUpstreams,
} from "./assembly/parts.ts";
import { sandboxPool } from "./codemode/index.ts";
import type { GatewayConfig } from "./config/index.ts";
import { CompiledContractRegistry } from "./contracts/index.ts";
import type { Gateway } from "./core/gateway.ts";
import type { VirtualRepository } from "./demo/repository.ts";
import { CredentialResolver } from "./dispatch/index.ts";
import { contractImport } from "./dispatch/mcp/config.ts";
import type { McpUpstreams } from "./dispatch/mcp/upstream.ts";
import { History } from "./history/index.ts";
import { createApp, type HttpEnv } from "./http/app.ts";
import { Limits } from "./limits/index.ts";
import { GatewayMetrics, mirrorSamples } from "./observability/metrics.ts";
import { startTelemetry, type Telemetry } from "./observability/otel.ts";
import { gatewaySamples } from "./observability/samples.ts";
import { enableTracing } from "./observability/tracing.ts";
import { createScheduling } from "./schedule/index.ts";
import { openStore } from "./store/index.ts";
import type { Store } from "./store/types.ts";

export { ListenError };

export interface RunningGateway {
  gateway: Gateway;
  /** The URL the gateway listens on, e.g. http://127.0.0.1:8080. */
  url: string;
  close(): Promise<void>;
}

export interface GatewayParts {
  gateway: Gateway;
  config: GatewayConfig;
  /** The in-process demo repository, when the configuration enables it. */
  repository: VirtualRepository | undefined;
  /** OpenTelemetry export, when the `OTEL_*` environment turns it on. */
  telemetry: Telemetry | undefined;
  close(): Promise<void>;
}

/**
 * Builds every part of the gateway from a configuration, in the order they depend on each other:
 * telemetry (refused before anything starts, e.g. OTEL_EXPORTER_OTLP_PROTOCOL=grpc; flushed last
 * at close), the store, the policy, identity, grants, the decision log, in-process handlers,
 * upstream MCP servers, a shadow policy; then the gateway itself.
 */
export async function createGateway(
  config: GatewayConfig,
  options: { store?: Store } = {},
): Promise<GatewayParts> {
  const telemetry = await startTelemetry();
  const closers: Closers = telemetry ? [() => telemetry.shutdown()] : [];
  const store = options.store ?? (await openStore(config.store));
  if (!options.store) closers.push(() => store.close());
  try {
    const metrics = new GatewayMetrics();
    const contracts = new CompiledContractRegistry(config.tools, { pointer: "/tools" });
    const credentials = new CredentialResolver(config.credentials);
    const { policy, parts: policyParts } = await startPolicy(config, store, credentials, metrics, closers);
    const identity = await startIdentity(config);
    const grants = await startGrants(config, store, closers);
    const { log, checkpoints, refusals } = await startLog(config, store, credentials, metrics, closers);
    const { handlers, repository } = await seedHandlers(config, store);
    // Rebuilds the registry when a server with `contracts: import` lists its catalog (once the gateway exists).
    let reimport: (() => void) | undefined;
    const mcp = await startUpstreams(config, credentials, closers, () => reimport?.());
    const shadow = await startShadow(policyParts, log, metrics);
    const gateway: Gateway = {
      contracts,
      identity,
      store,
      policy,
      grants,
      log,
      ...(checkpoints === undefined ? {} : { checkpoints }),
      refusals,
      handlers,
      metrics,
      executorId: config.server.executor_id,
      credentials,
      ...(mcp ? { mcp } : {}),
      ...(config.limits.length === 0 ? {} : { limits: new Limits(config.limits) }),
      ...(config.history.length === 0 ? {} : { history: new History(config.history) }),
      ...(shadow ? { shadow } : {}),
      scheduling: createScheduling(config.scheduling, { store, metrics }),
    };
    if (mcp !== undefined) reimport = await contractImports(config, gateway, mcp);
    if (telemetry?.meter) {
      metrics.mirror(telemetry.meter);
      mirrorSamples(telemetry.meter, gatewaySamples(gateway));
    }
    const close = async () => {
      await log.drain();
      await closeAll(closers);
    };
    return { gateway, config, repository, telemetry, close };
  } catch (error) {
    await closeAll(closers);
    throw error;
  }
}

/**
 * `contracts: import` (src/contracts/import/serve.ts): the gateway's registry becomes the
 * configured contracts plus those imported from the servers that ask for it, rebuilt by the
 * returned function whenever one of them lists its catalog. A rebuild that fails keeps the last
 * registry.
 */
async function contractImports(
  config: GatewayConfig,
  gateway: Gateway,
  upstreams: McpUpstreams,
): Promise<(() => void) | undefined> {
  const servers = config.mcp.servers.flatMap((server) => {
    const options = contractImport(server);
    return options === undefined ? [] : [{ server: server.name, trustHints: options.trustHints }];
  });
  if (servers.length === 0) return undefined;
  const { ImportedContracts } = await import("./contracts/import/index.ts");
  const imported = new ImportedContracts(gateway.contracts, servers, (message) => console.error(message));
  const rebuild = () => {
    try {
      gateway.contracts = imported.registry(upstreams.catalogs());
    } catch (error) {
      console.error(`mcp: imported contracts not updated, the last ones kept: ${String(error)}`);
    }
  };
  rebuild();
  return rebuild;
}

/** Starts the gateway's HTTP server on the configured host and port (0: a free port). */
export interface StartOptions {
  store?: Store;
  /** Adds routes to the app before it serves (benchmarks add their baselines this way). */
  configureApp?: (app: Hono<HttpEnv>, gateway: Gateway) => void;
}

export async function startGateway(
  config: GatewayConfig,
  options: StartOptions = {},
): Promise<RunningGateway & { parts: GatewayParts }> {
  // The port is taken before anything else starts (upstream MCP servers are child processes):
  // a busy port fails at once with one line, and nothing is left running. Until the gateway is
  // built, requests get a retryable 503.
  let app: Hono<HttpEnv> | undefined;
  const { server, port } = await listen(config.server, (request, env) =>
    app ? app.fetch(request, env) : starting(),
  );
  let parts: GatewayParts;
  try {
    parts = await createGateway(config, options.store ? { store: options.store } : {});
  } catch (error) {
    await closeServer(server);
    throw error;
  }
  const tracing = parts.telemetry?.tracing;
  // Code Mode's sandbox threads, started by the runs that need them and ended with the gateway.
  const sandbox = sandboxPool(config.code_mode);
  const built = createApp(parts.gateway, {
    sandbox,
    ...(tracing ? { tracing } : {}),
    bodyLimitBytes: config.server.body_limit_bytes,
    refusalWindowMs: config.decision_log.refusal_window_ms,
    roles: config.roles,
    console: config.console,
    mcpEndpoint: config.mcp.endpoint,
    mcpSessions: config.mcp.sessions,
    codeMode: config.code_mode,
    mcpSecurity: { allowedHosts: config.mcp.allowed_hosts, allowedOrigins: config.mcp.allowed_origins },
  });
  options.configureApp?.(built, parts.gateway);
  const stopTracing = tracing ? enableTracing() : () => {};
  app = built;
  const host = config.server.host.includes(":") ? `[${config.server.host}]` : config.server.host;
  return {
    gateway: parts.gateway,
    parts,
    url: `http://${host}:${port}`,
    async close() {
      await closeServer(server);
      stopTracing();
      await parts.close();
      // The Code Mode sandbox's threads (started by runs) would keep the process alive from a
      // checkout.
      await sandbox.close();
    },
  };
}
