/**
 * Assembles a gateway from its configuration and serves it over HTTP.
 */

import path from "node:path";
import {
  createAdaptorServer,
  type Http2Bindings,
  type HttpBindings,
  type ServerType,
} from "@hono/node-server";
import type { Hono } from "hono";
import { sandboxPool } from "./codemode/index.ts";
import { samplePoliciesDir } from "./config/config.ts";
import type { GatewayConfig } from "./config/index.ts";
import { ContractRegistry } from "./contracts/index.ts";
import { WritError } from "./core/errors.ts";
import type { Gateway, ShadowCallContext } from "./core/gateway.ts";
import type { InProcessHandler } from "./core/handlers.ts";
import { DecisionLog, RefusalAggregator, shadowEntry, startCheckpointer } from "./decisionlog/index.ts";
import { startShipper } from "./decisionlog/ship/index.ts";
import { demoWorkspace, VirtualRepository } from "./demo/repository.ts";
import { CredentialResolver } from "./dispatch/index.ts";
import { contractImport } from "./dispatch/mcp/config.ts";
import type { McpUpstreams } from "./dispatch/mcp/upstream.ts";
import { GrantSigner } from "./grants/index.ts";
import { createApp, type HttpEnv } from "./http/app.ts";
import { DevIssuer, IdentityVerifier, type IssuerConfigInput } from "./identity/index.ts";
import { Limits } from "./limits/index.ts";
import { GatewayMetrics, mirrorSamples } from "./observability/metrics.ts";
import { startTelemetry, type Telemetry } from "./observability/otel.ts";
import { gatewaySamples } from "./observability/samples.ts";
import { enableTracing } from "./observability/tracing.ts";
import { compiledCacheBeside } from "./policy/compiled-cache.ts";
import {
  bundleOrigin,
  type CustomBuiltins,
  environment,
  loadPolicyBuiltins,
  type OpaRuntime,
  PolicyEngine,
  type PolicyEngineOptions,
  RevisionArchive,
  ShadowPolicy,
} from "./policy/index.ts";
import { createScheduling } from "./schedule/index.ts";
import { openStore, postgresSettings } from "./store/index.ts";
import type { Store } from "./store/types.ts";

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

/** Builds every part of the gateway (store, policy, identity, grants, log) from a configuration. */
export async function createGateway(
  config: GatewayConfig,
  options: { store?: Store } = {},
): Promise<GatewayParts> {
  // Refused before anything starts (e.g. OTEL_EXPORTER_OTLP_PROTOCOL=grpc); flushed last at close.
  const telemetry = await startTelemetry();
  const closers: Array<() => Promise<void> | void> = telemetry ? [() => telemetry.shutdown()] : [];
  const store = options.store ?? (await openStore(config.store));
  if (!options.store) closers.push(() => store.close());
  try {
    const metrics = new GatewayMetrics();
    const contracts = new ContractRegistry(config.tools, { pointer: "/tools" });

    const credentials = new CredentialResolver(config.credentials);
    // Every revision loaded (the live policy's and a shadow policy's) is archived in the store,
    // off the load's path (a failure is retried with the next load, never fails it).
    const revisions = new RevisionArchive(store, (error, revision) =>
      console.error(
        `policy revision ${revision} not archived yet (tried again at the next load): ${String(error)}`,
      ),
    );
    closers.push(() => revisions.settled());
    // Custom builtins are loaded once and given to the live policy and a shadow policy alike.
    const builtins =
      config.policy.builtins.length > 0 ? await loadPolicyBuiltins(config.policy.builtins) : undefined;
    const policy = await startPolicyEngine(
      "policy",
      config.policy,
      { config, credentials, closers, revisions, builtins },
      (result) => metrics.policyReloads.inc({ result }),
    );

    const issuers: IssuerConfigInput[] = [...config.identity.issuers];
    if (config.identity.dev_issuer.enabled) {
      const dev = await DevIssuer.create({
        keyFile: config.identity.dev_issuer.key_file,
        issuer: config.identity.dev_issuer.issuer,
        audience: config.identity.dev_issuer.audience,
      });
      issuers.push(dev.issuerConfig());
    }
    const { resource, scopes_supported: scopes } = config.mcp;
    const identity = new IdentityVerifier(
      { issuers },
      { protectedResource: { ...(resource ? { resource } : {}), ...(scopes ? { scopes } : {}) } },
    );
    // A store shared by several instances (PostgreSQL) holds their signing keys too.
    const sharedKeys = store.grantKeySet?.();
    if (sharedKeys !== undefined && config.grants.key_file !== undefined) {
      console.error(
        `grant signing keys: kept in the ${sharedKeys.description}, shared by every instance (grants.key_file ${config.grants.key_file} is not used)`,
      );
    }
    const grants = await GrantSigner.create(
      config.grants,
      sharedKeys === undefined ? {} : { storage: sharedKeys },
    );
    grants.watch((error) =>
      console.error(`grant key reload failed, keeping the loaded keys: ${String(error)}`),
    );
    closers.push(() => grants.unwatch());
    const log = new DecisionLog(
      store,
      config.decision_log.redaction ? { redaction: config.decision_log.redaction } : {},
    );
    // Signed checkpoints of the log's head, every interval and once more at close (after the drain).
    const checkpoints = await startCheckpointer(config.decision_log, store, (ref) =>
      credentials.resolve(ref),
    );
    if (checkpoints !== undefined) closers.push(() => checkpoints.close());
    // Shipping to a decision-log service; at close it flushes what it can within its bound.
    const shipper = startShipper(config.decision_log.ship, store, (ref) => credentials.resolve(ref), metrics);
    if (shipper !== undefined) closers.push(() => shipper.close());

    const handlers = new Map<string, InProcessHandler>();
    let repository: VirtualRepository | undefined;
    if (config.demo.repository) {
      repository = new VirtualRepository(store);
      for (const [name, handler] of Object.entries(repository.handlers())) handlers.set(name, handler);
      const existing = await store.getResource("workspace", "ws-demo");
      if (!existing) await store.putResource(demoWorkspace());
    }
    for (const seed of config.seeds.resources) {
      if (!(await store.getResource(seed.type, seed.id))) await store.putResource(seed);
    }

    let mcp: McpUpstreams | undefined;
    // Rebuilds the registry when a server with `contracts: import` lists its catalog (once the gateway exists).
    let reimport: (() => void) | undefined;
    if (config.mcp.servers.length > 0) {
      const { McpUpstreams } = await import("./dispatch/mcp/upstream.ts");
      const upstreams = new McpUpstreams(config.mcp.servers, {
        credentials,
        connectTimeoutMs: config.mcp.connect_timeout_ms,
        onCatalog: () => reimport?.(),
      });
      mcp = upstreams;
      closers.push(() => upstreams.close());
      await upstreams.start();
    }

    // Refusals of unauthenticated callers: a flood becomes a few entries with counts (flushed
    // into the log before it drains).
    const refusals = new RefusalAggregator(log, { windowMs: config.decision_log.refusal_window_ms });
    log.beforeDrain(() => refusals.flush());
    // A candidate policy in shadow mode: its disagreements are recorded before the log drains.
    let shadow: ShadowPolicy<ShadowCallContext> | undefined;
    if (config.policy.shadow) {
      const candidate = await startPolicyEngine(
        "shadow policy",
        {
          ...config.policy.shadow,
          dir: config.policy.shadow.dir ?? "",
          rego_version: config.policy.shadow.rego_version ?? config.policy.rego_version,
        },
        { config, credentials, closers, revisions, builtins },
      );
      const own = new ShadowPolicy<ShadowCallContext>(
        candidate,
        ({ live, shadow: decided }, call) =>
          log.append(
            shadowEntry({
              live,
              shadow: decided,
              subject: call.subject,
              action: call.action,
              resource: call.resource,
              requestId: call.requestId,
            }),
          ),
        metrics,
        { maxQueue: config.policy.shadow.max_queue },
      );
      shadow = own;
      log.beforeDrain(() => own.flush());
    }
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
      ...(shadow ? { shadow } : {}),
      scheduling: createScheduling(config.scheduling, { store, metrics }),
    };
    if (mcp !== undefined) reimport = await contractImports(config, gateway, mcp);
    if (telemetry?.meter) {
      metrics.mirror(telemetry.meter);
      mirrorSamples(telemetry.meter, gatewaySamples(gateway));
    }
    return {
      gateway,
      config,
      repository,
      telemetry,
      async close() {
        await log.drain();
        for (const close of closers.reverse()) await close();
      },
    };
  } catch (error) {
    for (const close of closers.reverse()) await close();
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

/** Where a policy comes from: a folder, or a bundle file or server (`policy:`, `policy.shadow:`). */
interface PolicySource {
  dir: string;
  /** The Rego version of the folder's files. */
  rego_version: 0 | 1;
  bundle?: string | undefined;
  bundle_poll_interval_s: number;
  bundle_credentials_ref?: string | undefined;
  watch: boolean;
}

/** Loads a policy engine for the configured entrypoint and keeps it watching its source. */
async function startPolicyEngine(
  what: "policy" | "shadow policy",
  source: PolicySource,
  parts: {
    config: GatewayConfig;
    credentials: CredentialResolver;
    closers: Array<() => Promise<void> | void>;
    revisions: RevisionArchive;
    builtins: CustomBuiltins | undefined;
  },
  reloaded: (result: "ok" | "failed") => void = () => {},
): Promise<PolicyEngine> {
  const { config, credentials, closers, revisions, builtins } = parts;
  const bundleCredentials = source.bundle_credentials_ref;
  const engine = new PolicyEngine({
    onLoad: (loaded) => revisions.keep(loaded),
    entrypoint: config.policy.entrypoint,
    timeBudgetMs: config.policy.time_budget_ms,
    // Held to its budget while it runs, off the event loop (src/policy/evaluator.ts).
    isolate: true,
    strictBuiltinErrors: config.policy.strict_builtin_errors,
    ...(builtins === undefined ? {} : { builtins }),
    regoVersion: source.rego_version,
    opaRuntime: opaRuntimeOf(config.policy),
    ...compiledPolicyOptions(config, source.dir),
    ...(bundleCredentials === undefined
      ? {}
      : { bundleHeaders: () => credentials.resolve(bundleCredentials) }),
  });
  const from = source.bundle ?? source.dir;
  if (source.bundle) await engine.loadBundle(source.bundle);
  else await engine.loadDirectory(source.dir);
  reloaded("ok");
  if (source.watch) {
    const events = {
      onReload: (revision: string) => {
        reloaded("ok");
        console.log(`${what} reloaded from ${from}: revision ${revision}`);
      },
      onError: (error: Error) => {
        reloaded("failed");
        console.error(
          `${what} reload from ${from} failed, keeping revision ${engine.revision}:\n${error.message}`,
        );
      },
    };
    if (source.bundle) engine.watchBundle(source.bundle, events, source.bundle_poll_interval_s * 1000);
    else engine.watchDirectory(source.dir, events);
  }
  closers.push(() => engine.close());
  return engine;
}

/**
 * What `opa.runtime()` shows the gateway's policies (`policy.opa_runtime`): the environment
 * variables listed, and as `config` the policy settings that hold no secret (a bundle server's
 * address without its credentials or query).
 */
function opaRuntimeOf(policy: GatewayConfig["policy"]): OpaRuntime | "disabled" {
  const { enabled, env } = policy.opa_runtime;
  if (!enabled) return "disabled";
  const source = policy.bundle
    ? { bundle: bundleOrigin(policy.bundle), bundle_poll_interval_s: policy.bundle_poll_interval_s }
    : { dir: policy.dir };
  return {
    env: environment(env),
    config: {
      policy: {
        ...source,
        entrypoint: policy.entrypoint,
        watch: policy.watch,
        time_budget_ms: policy.time_budget_ms,
        opa_runtime: { enabled, env: [...env] },
      },
    },
  };
}

/**
 * Compiled policies are kept beside a SQLite file (`.writ/policy-cache/`), so a restart does not
 * compile again; the package's sample policies are named from the package's root, as the entry
 * the build precompiled for them.
 */
function compiledPolicyOptions(config: GatewayConfig, dir: string): PolicyEngineOptions {
  const sqlite = postgresSettings(config.store) === undefined ? config.store.sqlite : undefined;
  return {
    compiledCache: compiledCacheBeside(sqlite),
    ...(dir === samplePoliciesDir ? { sourceRoot: path.dirname(samplePoliciesDir) } : {}),
  };
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
async function listen(
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

function closeServer(server: ServerType): Promise<void> {
  return new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The answer while the gateway is still being built (policy compiling, upstreams connecting). */
function starting(): Response {
  const error = new WritError("backend_unavailable", "Writ is starting", {
    suggestedFix: "retry in a second",
    retryable: true,
    effectCommitted: false,
  });
  return Response.json(error.toJSON(), { status: error.httpStatus, headers: { "retry-after": "1" } });
}
