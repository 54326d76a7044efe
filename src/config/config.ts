/**
 * The gateway configuration: one YAML file (see `writ.default.yaml` beside this file, which
 * `writ serve` uses when no `--config` is given). Relative paths are resolved against the
 * folder of the configuration file.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
// Each section's schema from its own module, not the module's index: `writ token` and the other
// commands that only read a configuration then load no gateway code (a second less per start).
import { codeModeConfigSchema } from "../codemode/config.ts";
import { CODE_RUN_ACTION } from "../codemode/contract.ts";
import { toolContractsSchema } from "../contracts/schema.ts";
import { checkpointsConfigSchema } from "../decisionlog/checkpoint.ts";
import { witnessConfigSchema } from "../decisionlog/checkpoint-witness.ts";
import { redactionRulesSchema } from "../decisionlog/redact.ts";
import { shipConfigSchema } from "../decisionlog/ship/config.ts";
import { credentialsConfigSchema } from "../dispatch/credentials.ts";
import { grantsConfigSchema } from "../grants/signer.ts";
import { historyConfigSchema, unknownHistoryTools } from "../history/config.ts";
import { issuerConfigSchema } from "../identity/config.ts";
import { limitsConfigSchema, unknownLimitTools } from "../limits/config.ts";
import { mcpConfigSchema } from "../mcp/config.ts";
import { schedulingConfigSchema } from "../schedule/config.ts";
import { storeConfigSchema } from "../store/config.ts";

/** A Rego version: 1, or 0 for Rego v0 (OPA's `--v0-compatible`). */
const regoVersionSchema = z.union([z.literal(0), z.literal(1)], {
  error: "rego_version is 1 (Rego v1) or 0 (Rego v0, as opa --v0-compatible reads it)",
});

const resourceSeedSchema = z
  .object({
    type: z.string().min(1),
    id: z.string().min(1),
    owner: z.string().min(1),
    tenant: z.string().min(1).default("default"),
    attributes: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

export const gatewayConfigSchema = z
  .object({
    server: z
      .object({
        host: z.string().default("127.0.0.1"),
        port: z.number().int().min(0).max(65535).default(8080),
        /** Largest request body accepted, in bytes. */
        body_limit_bytes: z
          .number()
          .int()
          .positive()
          .default(1024 * 1024),
        /** The audience of grants for tools Writ executes itself (in-process backends). */
        executor_id: z.string().min(1).default("writ"),
        /**
         * How long a client may take to send a whole request (headers and body); a body dribbled
         * slower is cut off with 408. Answers (an MCP stream of a long call) are not limited by it.
         */
        request_timeout_ms: z.number().int().positive().default(30_000),
        /** How long a client may take to send a request's headers. */
        headers_timeout_ms: z.number().int().positive().default(10_000),
        /** How long an idle keep-alive connection stays open. */
        keep_alive_timeout_ms: z.number().int().positive().default(5_000),
      })
      .strict()
      .prefault({}),
    store: storeConfigSchema.prefault({}),
    policy: z
      .object({
        /** Folder of .rego files compiled at start (tests excluded). */
        dir: z.string().min(1).default("policies"),
        /**
         * The Rego version `dir`'s files are written in: 1, or 0 for Rego v0 policies (as
         * `opa … --v0-compatible` reads them). A bundle's manifest says its own.
         */
        rego_version: regoVersionSchema.default(1),
        /**
         * A bundle (.tar.gz in the layout of `opa build -t wasm`, from `writ policy build` or
         * `opa`) to load instead of compiling `dir`.
         */
        bundle: z.string().min(1).optional(),
        /** How often a bundle server (`bundle` as an http(s) URL) is asked for a newer bundle. */
        bundle_poll_interval_s: z.number().positive().default(10),
        /** Credentials (a name under `credentials:`) sent to the bundle server. */
        bundle_credentials_ref: z.string().min(1).optional(),
        entrypoint: z.string().min(1).default("writ/decision"),
        /**
         * Custom builtins: ES modules (relative to this file) whose `builtins` export declares
         * and implements functions the policies call, as OPA's Go extensions do (README).
         */
        builtins: z.array(z.string().min(1)).default([]),
        /** Recompile when files in `dir` change; a broken change keeps the last good policy. */
        watch: z.boolean().default(true),
        /**
         * How long one evaluation may run. Evaluations run on worker threads and one is stopped
         * when its budget runs out (the call is denied): the event loop waits for it that long
         * at most.
         */
        time_budget_ms: z.number().positive().default(250),
        /**
         * Strict builtin errors (OPA's --strict-builtin-errors): a builtin that fails (a bad
         * regex, a malformed JWT, to_number("x")) fails the evaluation, which denies, and the
         * entry names the builtin; off, the failing call is undefined and the rule around it
         * silently does not hold. Off when absent (configurations written before it); the
         * shipped default configuration turns it on. A bundle keeps how it was built.
         */
        strict_builtin_errors: z.boolean().default(false),
        /**
         * `opa.runtime()`: OPA's runtime document, showing only the environment variables named
         * in `env` (none by default, so that no secret reaches a decision unless listed) and, as
         * its `config`, the policy settings that are not secret. With `enabled: false` a policy
         * that calls it does not load.
         */
        opa_runtime: z
          .object({
            enabled: z.boolean().default(true),
            env: z.array(z.string().min(1)).default([]),
          })
          .strict()
          .prefault({}),
        /**
         * Shadow mode: a candidate policy (a folder, a bundle file or a bundle server's URL)
         * decides every call beside the live one, for the same entrypoint, off the answer's
         * path. Its decisions never reach callers; disagreements are decision-log entries at
         * `writ/shadow` linked to the live decision, and counted in /metrics.
         */
        shadow: z
          .object({
            dir: z.string().min(1).optional(),
            bundle: z.string().min(1).optional(),
            /** The Rego version of `dir`'s files; default `policy.rego_version`. */
            rego_version: regoVersionSchema.optional(),
            bundle_poll_interval_s: z.number().positive().default(10),
            bundle_credentials_ref: z.string().min(1).optional(),
            watch: z.boolean().default(true),
            /** Calls waiting for the shadow policy beyond which new ones are skipped (and counted). */
            max_queue: z.number().int().positive().default(1000),
          })
          .strict()
          .refine((s) => (s.dir === undefined) !== (s.bundle === undefined), {
            message: "name the candidate policy with exactly one of dir (a folder of .rego files) or bundle",
          })
          .optional(),
      })
      .strict()
      .prefault({}),
    identity: z
      .object({
        issuers: z.array(issuerConfigSchema).default([]),
        /**
         * The local development issuer `writ token` mints with. For trying Writ out only: a
         * production configuration leaves it disabled.
         */
        dev_issuer: z
          .object({
            enabled: z.boolean().default(false),
            key_file: z.string().min(1).default(".writ/dev-issuer.json"),
            issuer: z.string().min(1).default("writ-dev"),
            audience: z.string().min(1).default("writ"),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    grants: grantsConfigSchema.prefault({ issuer: "writ", key_file: ".writ/grant-keys.json" }),
    /** Role names that unlock the administrative and review APIs. */
    roles: z
      .object({
        reviewer: z.array(z.string().min(1)).default(["reviewer"]),
        admin: z.array(z.string().min(1)).default(["admin"]),
        /**
         * Roles that may sign in to the console's approvals queue (each request still needs one of
         * the approver roles its policy decision named).
         */
        approver: z.array(z.string().min(1)).default(["approver"]),
        /**
         * Roles that may reach across tenants on the administrative and review surfaces (naming
         * `?tenant=`, or `*` for all); every such use is a decision-log entry. None by default:
         * everyone else sees and changes their own tenant's data only.
         */
        platform: z.array(z.string().min(1)).default([]),
      })
      .strict()
      .prefault({}),
    /** The web console's sessions (src/console/session.ts). */
    console: z
      .object({
        /**
         * The longest a console session lasts, in seconds (8 h by default); it also ends when the
         * token it was started with expires, whichever comes first.
         */
        session_max_age_s: z
          .number()
          .int()
          .positive()
          .default(8 * 60 * 60),
        /** Ends a session unused for this many seconds (off by default). */
        idle_timeout_s: z.number().int().positive().optional(),
        /**
         * OpenID Connect sign-in (authorization code with PKCE) beside pasting a token: the
         * provider's access tokens start a session as a pasted token does, so its issuer must be
         * one of `identity.issuers`, with the audience the tokens carry (`resource` asks for it).
         */
        oidc: z
          .object({
            issuer: z.url(),
            client_id: z.string().min(1),
            /** The environment variable holding the client secret; without it, a public client. */
            client_secret_env: z.string().min(1).optional(),
            scope: z.string().min(1).default("openid"),
            /** RFC 8707 resource indicator: the audience the access token is for. */
            resource: z.string().min(1).optional(),
            /** Default: the request's origin + /console/sign-in/oidc/callback. */
            redirect_uri: z.url().optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .prefault({}),
    decision_log: z
      .object({
        redaction: redactionRulesSchema.optional(),
        /** Signed checkpoints of the log's head, so that a log cut back is detected. */
        checkpoints: checkpointsConfigSchema.prefault({}),
        /** Where checkpoints are shipped too: `{file: path}` or `{url: https://…}`. */
        witness: witnessConfigSchema.optional(),
        /**
         * Identical refusals of unauthenticated callers (per source address and category) within
         * this window are one entry with a count after the first (logged at once).
         */
        refusal_window_ms: z.number().int().positive().default(10_000),
        /** Ships the log to an OPA-compatible decision-log service (off unless configured). */
        ship: shipConfigSchema.optional(),
      })
      .strict()
      .prefault({}),
    /** How a proposal's calls run side by side, and the bounds of concurrency groups (src/schedule/). */
    scheduling: schedulingConfigSchema.prefault({}),
    tools: toolContractsSchema.default([]),
    /** Budgets and rate limits, charged when the policy allows a call (src/limits/). */
    limits: limitsConfigSchema,
    /** History facts the policy sees in `input.context.history` (src/history/). */
    history: historyConfigSchema,
    /** Upstream MCP servers (`backend: {kind: mcp}` tools) and Writ's own `/mcp` endpoint. */
    mcp: mcpConfigSchema.prefault({}),
    /** Code Mode (`run_code`): on by default, limits per run. */
    code_mode: codeModeConfigSchema.prefault({}),
    /** Backend credentials by name (`credentials_ref` of HTTP tools): from the environment or a file. */
    credentials: credentialsConfigSchema,
    seeds: z
      .object({ resources: z.array(resourceSeedSchema).default([]) })
      .strict()
      .prefault({}),
    /** The in-process demo backend (the virtual repository of the seed chapter). */
    demo: z
      .object({ repository: z.boolean().default(false) })
      .strict()
      .prefault({}),
  })
  .strict();

export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** The configuration `writ serve` uses without `--config`. */
export const defaultConfigFile = path.join(path.dirname(fileURLToPath(import.meta.url)), "writ.default.yaml");

/**
 * The sample policies that ship with Writ (the package's `policies/`, two levels above this
 * module both in src/config/ and in the compiled dist/config/).
 */
export const samplePoliciesDir = fileURLToPath(new URL("../../policies", import.meta.url));

function resolveDecisionLogPaths(
  log: GatewayConfig["decision_log"],
  at: (p: string) => string,
): GatewayConfig["decision_log"] {
  const keyFile = log.checkpoints.key_file;
  return {
    ...log,
    checkpoints: { ...log.checkpoints, ...(keyFile === undefined ? {} : { key_file: at(keyFile) }) },
    ...(log.witness !== undefined && "file" in log.witness
      ? { witness: { file: at(log.witness.file) } }
      : {}),
  };
}

function resolvePaths(config: GatewayConfig, base: string): GatewayConfig {
  const at = (p: string) => (p === ":memory:" || path.isAbsolute(p) ? p : path.resolve(base, p));
  return {
    ...config,
    store: config.store.postgres === undefined ? { sqlite: at(config.store.sqlite) } : config.store,
    policy: {
      ...config.policy,
      dir: at(config.policy.dir),
      builtins: config.policy.builtins.map(at),
      // A bundle server's URL stays as it is; a bundle file is relative to the configuration.
      ...(config.policy.bundle
        ? {
            bundle: /^https?:\/\//i.test(config.policy.bundle)
              ? config.policy.bundle
              : at(config.policy.bundle),
          }
        : {}),
      ...(config.policy.shadow
        ? {
            shadow: {
              ...config.policy.shadow,
              ...(config.policy.shadow.dir ? { dir: at(config.policy.shadow.dir) } : {}),
              ...(config.policy.shadow.bundle && !/^https?:\/\//i.test(config.policy.shadow.bundle)
                ? { bundle: at(config.policy.shadow.bundle) }
                : {}),
            },
          }
        : {}),
    },
    identity: {
      ...config.identity,
      dev_issuer: { ...config.identity.dev_issuer, key_file: at(config.identity.dev_issuer.key_file) },
    },
    grants: { ...config.grants, ...(config.grants.key_file ? { key_file: at(config.grants.key_file) } : {}) },
    decision_log: resolveDecisionLogPaths(config.decision_log, at),
    mcp: {
      ...config.mcp,
      servers: config.mcp.servers.map((s) =>
        s.transport === "stdio" ? { ...s, cwd: s.cwd === undefined ? base : at(s.cwd) } : s,
      ),
    },
    credentials: Object.fromEntries(
      Object.entries(config.credentials).map(([name, c]) => [
        name,
        c.from === "file" ? { ...c, path: at(c.path) } : c,
      ]),
    ),
  };
}

/** Parses a configuration document (already read from YAML); `base` resolves relative paths. */
export function parseConfig(document: unknown, base: string, source = "configuration"): GatewayConfig {
  const parsed = gatewayConfigSchema.safeParse(document ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  /${i.path.join("/")}: ${i.message}`).join("\n");
    throw new ConfigError(`${source} is not a valid Writ configuration:\n${problems}`);
  }
  const credentials = (ref: string | undefined) => ref === undefined || ref in parsed.data.credentials;
  const servers = new Set(parsed.data.mcp.servers.map((s) => s.name));
  // A Code Mode run is decided as the action `code.run`, which limits and facts may name like a tool.
  const actions = new Set([
    ...parsed.data.tools.map((t) => t.name),
    ...(parsed.data.code_mode.enabled ? [CODE_RUN_ACTION] : []),
  ]);
  const missing = [
    ...parsed.data.tools.flatMap((t, i) => {
      if (t.backend.kind === "http" && !credentials(t.backend.credentials_ref)) {
        return [
          `  /tools/${i}/backend/credentials_ref: no credentials named ${JSON.stringify(t.backend.credentials_ref)} under credentials:`,
        ];
      }
      if ("server" in t.backend && !servers.has(t.backend.server)) {
        return [
          `  /tools/${i}/backend/server: no MCP server named ${JSON.stringify(t.backend.server)} under mcp.servers:`,
        ];
      }
      return [];
    }),
    ...(credentials(parsed.data.policy.bundle_credentials_ref)
      ? []
      : [
          `  /policy/bundle_credentials_ref: no credentials named ${JSON.stringify(parsed.data.policy.bundle_credentials_ref)} under credentials:`,
        ]),
    ...(credentials(parsed.data.decision_log.ship?.credentials_ref)
      ? []
      : [
          `  /decision_log/ship/credentials_ref: no credentials named ${JSON.stringify(parsed.data.decision_log.ship?.credentials_ref)} under credentials:`,
        ]),
    ...unknownLimitTools(parsed.data.limits, actions),
    ...unknownHistoryTools(parsed.data.history, actions),
    ...parsed.data.mcp.servers.flatMap((s, i) =>
      s.transport === "http" && !credentials(s.credentials_ref)
        ? [
            `  /mcp/servers/${i}/credentials_ref: no credentials named ${JSON.stringify(s.credentials_ref)} under credentials:`,
          ]
        : [],
    ),
  ];
  if (missing.length > 0)
    throw new ConfigError(`${source} is not a valid Writ configuration:\n${missing.join("\n")}`);
  return resolvePaths(parsed.data, base);
}

/**
 * Reads a configuration file. Paths in the default configuration are relative to the current
 * folder (where `npm start` runs), except that a folder without its own `policies/` gets the
 * sample policies shipped with Writ; paths in any other file are relative to that file.
 */
export async function loadConfig(file: string = defaultConfigFile): Promise<GatewayConfig> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    throw new ConfigError(`cannot read the configuration file ${file}: check the path given to --config`);
  }
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw new ConfigError(
      `${file} is not valid YAML: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (file !== defaultConfigFile) return parseConfig(document, path.dirname(path.resolve(file)), file);
  const config = parseConfig(document, process.cwd(), file);
  return existsSync(config.policy.dir)
    ? config
    : { ...config, policy: { ...config.policy, dir: samplePoliciesDir } };
}
