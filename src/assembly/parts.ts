/**
 * The steps of `createGateway` (src/server.ts), one per part: each starts its part from the
 * configuration and pushes what must be closed when the gateway stops.
 */
import type { GatewayConfig } from "../config/index.ts";
import type { ShadowCallContext } from "../core/gateway.ts";
import type { InProcessHandler } from "../core/handlers.ts";
import {
  type Checkpointer,
  DecisionLog,
  RefusalAggregator,
  shadowEntry,
  startCheckpointer,
} from "../decisionlog/index.ts";
import { startShipper } from "../decisionlog/ship/index.ts";
import { demoWorkspace, VirtualRepository } from "../demo/repository.ts";
import type { CredentialResolver } from "../dispatch/index.ts";
import type { McpUpstreams } from "../dispatch/mcp/upstream.ts";
import { GrantSigner } from "../grants/index.ts";
import { IdentityVerifier, trustedIssuers } from "../identity/index.ts";
import type { GatewayMetrics } from "../observability/metrics.ts";
import {
  type CustomBuiltins,
  loadPolicyBuiltins,
  type PolicyEngine,
  RevisionArchive,
  ShadowPolicy,
} from "../policy/index.ts";
import type { Store } from "../store/types.ts";
import type { Closers } from "./closers.ts";
import { startPolicyEngine } from "./policy.ts";

/** What the policy engines share: the revision archive and the custom builtins. */
export interface PolicyParts {
  config: GatewayConfig;
  credentials: CredentialResolver;
  closers: Closers;
  revisions: RevisionArchive;
  builtins: CustomBuiltins | undefined;
}

/**
 * The live policy. Every revision loaded (the live policy's and a shadow policy's) is archived in
 * the store off the load's path (a failure is retried with the next load, never fails it); custom
 * builtins are loaded once and given to both.
 */
export async function startPolicy(
  config: GatewayConfig,
  store: Store,
  credentials: CredentialResolver,
  metrics: GatewayMetrics,
  closers: Closers,
): Promise<{ policy: PolicyEngine; parts: PolicyParts }> {
  const revisions = new RevisionArchive(store, (error, revision) =>
    console.error(
      `policy revision ${revision} not archived yet (tried again at the next load): ${String(error)}`,
    ),
  );
  closers.push(() => revisions.settled());
  const builtins =
    config.policy.builtins.length > 0 ? await loadPolicyBuiltins(config.policy.builtins) : undefined;
  const parts = { config, credentials, closers, revisions, builtins };
  const policy = await startPolicyEngine("policy", config.policy, parts, (result) =>
    metrics.policyReloads.inc({ result }),
  );
  return { policy, parts };
}

/** The configured issuers, and the development issuer when it is on. */
export async function startIdentity(config: GatewayConfig): Promise<IdentityVerifier> {
  const issuers = await trustedIssuers(config.identity);
  const { resource, scopes_supported: scopes } = config.mcp;
  return new IdentityVerifier(
    { issuers },
    { protectedResource: { ...(resource ? { resource } : {}), ...(scopes ? { scopes } : {}) } },
  );
}

/** The grant signer, watching its key file; a store shared by several instances holds the keys. */
export async function startGrants(
  config: GatewayConfig,
  store: Store,
  closers: Closers,
): Promise<GrantSigner> {
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
  return grants;
}

/**
 * The decision log, with signed checkpoints of its head (every interval and once more at close,
 * after the drain), shipping to a decision-log service (flushed within its bound at close), and
 * the refusals of unauthenticated callers aggregated so that a flood is a few entries with counts
 * (flushed into the log before it drains).
 */
export async function startLog(
  config: GatewayConfig,
  store: Store,
  credentials: CredentialResolver,
  metrics: GatewayMetrics,
  closers: Closers,
): Promise<{ log: DecisionLog; checkpoints: Checkpointer | undefined; refusals: RefusalAggregator }> {
  const { decision_log: settings } = config;
  const log = new DecisionLog(store, settings.redaction ? { redaction: settings.redaction } : {});
  const secret = (ref: string) => credentials.resolve(ref);
  const checkpoints = await startCheckpointer(settings, store, secret);
  if (checkpoints !== undefined) closers.push(() => checkpoints.close());
  const shipper = startShipper(settings.ship, store, secret, metrics);
  if (shipper !== undefined) closers.push(() => shipper.close());
  const refusals = new RefusalAggregator(log, { windowMs: settings.refusal_window_ms });
  log.beforeDrain(() => refusals.flush());
  return { log, checkpoints, refusals };
}

/** The in-process handlers (the demo repository's, when on) and the configured seed resources. */
export async function seedHandlers(
  config: GatewayConfig,
  store: Store,
): Promise<{ handlers: Map<string, InProcessHandler>; repository: VirtualRepository | undefined }> {
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
  return { handlers, repository };
}

/** Connections to the configured upstream MCP servers (none configured: undefined). */
export async function startUpstreams(
  config: GatewayConfig,
  credentials: CredentialResolver,
  closers: Closers,
  onCatalog: () => void,
): Promise<McpUpstreams | undefined> {
  if (config.mcp.servers.length === 0) return undefined;
  const { McpUpstreams } = await import("../dispatch/mcp/upstream.ts");
  const upstreams = new McpUpstreams(config.mcp.servers, {
    credentials,
    connectTimeoutMs: config.mcp.connect_timeout_ms,
    onCatalog,
  });
  closers.push(() => upstreams.close());
  await upstreams.start();
  return upstreams;
}

/** A candidate policy in shadow mode (`policy.shadow`): its disagreements logged before the log drains. */
export async function startShadow(
  parts: PolicyParts,
  log: DecisionLog,
  metrics: GatewayMetrics,
): Promise<ShadowPolicy<ShadowCallContext> | undefined> {
  const { policy } = parts.config;
  if (!policy.shadow) return undefined;
  const candidate = await startPolicyEngine(
    "shadow policy",
    {
      ...policy.shadow,
      dir: policy.shadow.dir ?? "",
      rego_version: policy.shadow.rego_version ?? policy.rego_version,
    },
    parts,
  );
  const shadow = new ShadowPolicy<ShadowCallContext>(
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
    { maxQueue: policy.shadow.max_queue },
  );
  log.beforeDrain(() => shadow.flush());
  return shadow;
}
