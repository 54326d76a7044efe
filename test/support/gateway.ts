/**
 * End-to-end harness: a real Writ gateway on 127.0.0.1 (port 0) built from the default
 * configuration, with
 *
 * - a temp folder for the SQLite file and the key files,
 * - `policy.dir` pointing at a temp COPY of the repository's `policies/` (watched, so a test can
 *   rewrite it to exercise hot reload),
 * - one trusted identity issuer whose JWKS is served over HTTP on 127.0.0.1, with an EdDSA key the
 *   test mints bearer tokens with (the development issuer is disabled),
 *
 * and helpers to talk to it over real HTTP. `close()` stops the gateway and the JWKS server and
 * removes the temp folder.
 */
import { randomUUID } from "node:crypto";
import { cp, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { JWTPayload } from "jose";
import { z } from "zod";
import { parseConfig } from "../../src/config/index.ts";
import type { Gateway } from "../../src/core/gateway.ts";
import type { VirtualRepository } from "../../src/demo/repository.ts";
import { type GatewayParts, startGateway } from "../../src/server.ts";
import {
  type JwksServer,
  jwksOf,
  makeKey,
  sign,
  startJwksServer,
  type TestKey,
} from "../identity/helpers.ts";
import { defaultConfigDocument } from "./config-file.ts";
import { repoRoot } from "./paths.ts";

/** The `iss` of the test identity provider. */
export const TEST_ISSUER = "https://idp.e2e.test";
/** The audience Writ accepts bearer tokens for. */
export const TEST_AUDIENCE = "writ";

export interface TokenOptions {
  /** The `tnt` claim (default `demo`, the tenant of `ws-demo`). */
  tenant?: string;
  /** The `roles` claim (default `["developer"]`). */
  roles?: string[];
  /** Any other claim, overriding the defaults (iss, aud, sub, iat, exp). */
  claims?: JWTPayload;
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
  text: string;
}

export interface RequestOptions {
  token?: string;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is (takes precedence over `body`). */
  rawBody?: string;
  requestId?: string;
  headers?: Record<string, string>;
}

export interface ProposalBody {
  format?: string;
  payload: unknown;
  execute?: boolean;
  session?: string;
}

export interface TestGateway {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** The gateway's grant key set URL. */
  jwksUrl: string;
  gateway: Gateway;
  parts: GatewayParts;
  repository: VirtualRepository;
  /** The temp copy of `policies/` the gateway watches. */
  policyDir: string;
  /** `<policyDir>/writ/decision.rego`. */
  decisionRego: string;
  /** The identity provider's signing key (its public half is served by the JWKS server). */
  issuerKey: TestKey;
  /** A bearer token from the test identity provider. */
  token(subject: string, options?: TokenOptions): Promise<string>;
  request(method: string, route: string, options?: RequestOptions): Promise<HttpAnswer>;
  /** POST /v1/proposals. */
  propose(token: string | undefined, body: ProposalBody, requestId?: string): Promise<HttpAnswer>;
  /** GET /healthz, parsed. */
  health(): Promise<Health>;
  /**
   * Replaces `writ/decision.rego` in the watched policy folder: `atomic` (default) writes a new
   * file and renames it over the old one, `in-place` rewrites the existing file.
   */
  writePolicy(source: string, mode?: "atomic" | "in-place"): Promise<void>;
  close(): Promise<void>;
}

export const healthSchema = z.strictObject({
  status: z.enum(["ok", "degraded", "unavailable"]),
  policy_revision: z.string().nullable(),
  policy_error: z.string().optional(),
  mcp_servers: z
    .array(
      z.object({
        name: z.string(),
        transport: z.string(),
        connected: z.boolean(),
        tools: z.number(),
        error: z.string().optional(),
      }),
    )
    .optional(),
});
export type Health = z.infer<typeof healthSchema>;

export interface StartOptions {
  /** Replaces `server.body_limit_bytes`. */
  bodyLimitBytes?: number;
  /** Loads the policy from this bundle file instead of compiling the policy folder. */
  bundle?: string;
  /** Listen on this port instead of one chosen at start (e.g. one reserved with `freePort`). */
  port?: number;
  /**
   * Changes the configuration document before it is parsed (tools, mcp servers, …); `tmp` is
   * the gateway's temp folder.
   */
  configure?: (document: Record<string, unknown>, tmp: string) => Record<string, unknown>;
}

const recordSchema = z.record(z.string(), z.unknown());

/** A bearer token from the test identity provider (its key is `issuerKey`). */
export function testToken(issuerKey: TestKey, subject: string, options: TokenOptions = {}): Promise<string> {
  return sign(issuerKey, {
    iss: TEST_ISSUER,
    aud: TEST_AUDIENCE,
    sub: subject,
    tnt: options.tenant ?? "demo",
    roles: options.roles ?? ["developer"],
    exp: Math.floor(Date.now() / 1000) + 600,
    ...options.claims,
  });
}

/** A fetch response read whole: its body as text, and as JSON when it is JSON. */
export async function answerOf(response: Response): Promise<HttpAnswer> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, json, text };
}

function section(document: Record<string, unknown>, name: string): Record<string, unknown> {
  const value = document[name];
  return value === undefined ? {} : recordSchema.parse(value);
}

export async function startTestGateway(options: StartOptions = {}): Promise<TestGateway> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), "writ-e2e-"));
  let jwks: JwksServer | undefined;
  try {
    const policyDir = path.join(tmp, "policies");
    await cp(path.join(repoRoot, "policies"), policyDir, { recursive: true });

    const issuerKey = await makeKey("EdDSA");
    jwks = await startJwksServer(jwksOf(issuerKey));

    const document = await defaultConfigDocument();
    const server = section(document, "server");
    const configured = {
      ...document,
      server: {
        ...server,
        host: "127.0.0.1",
        port: options.port ?? 0,
        ...(options.bodyLimitBytes === undefined ? {} : { body_limit_bytes: options.bodyLimitBytes }),
      },
      store: { ...section(document, "store"), sqlite: path.join(tmp, "writ.db") },
      policy: {
        ...section(document, "policy"),
        dir: policyDir,
        watch: true,
        ...(options.bundle === undefined ? {} : { bundle: options.bundle }),
      },
      identity: {
        issuers: [
          {
            issuer: TEST_ISSUER,
            audience: TEST_AUDIENCE,
            algorithms: ["EdDSA"],
            jwks_uri: jwks.url,
          },
        ],
        dev_issuer: { enabled: false, key_file: path.join(tmp, "dev-issuer.json") },
      },
      grants: { ...section(document, "grants"), key_file: path.join(tmp, "grant-keys.json") },
    };
    const config = parseConfig(
      options.configure ? options.configure(configured, tmp) : configured,
      tmp,
      "e2e configuration",
    );

    const running = await startGateway(config);
    const repository = running.parts.repository;
    if (repository === undefined) {
      await running.close();
      throw new Error("the default configuration no longer enables the demo repository");
    }
    const url = running.url;
    const jwksServer = jwks;

    const request = async (method: string, route: string, opts: RequestOptions = {}) => {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
      if (opts.requestId !== undefined) headers["x-request-id"] = opts.requestId;
      let body: string | undefined;
      if (opts.rawBody !== undefined) body = opts.rawBody;
      else if (opts.body !== undefined) body = JSON.stringify(opts.body);
      if (body !== undefined) headers["content-type"] ??= "application/json";
      const response = await fetch(`${url}${route}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
      });
      return answerOf(response);
    };

    const decisionRego = path.join(policyDir, "writ", "decision.rego");
    return {
      url,
      jwksUrl: `${url}/.well-known/jwks.json`,
      gateway: running.gateway,
      parts: running.parts,
      repository,
      policyDir,
      decisionRego,
      issuerKey,
      token: (subject, tokenOptions = {}) => testToken(issuerKey, subject, tokenOptions),
      request,
      propose: (token, body, requestId = randomUUID()) =>
        request("POST", "/v1/proposals", { ...(token === undefined ? {} : { token }), body, requestId }),
      async health() {
        const answer = await request("GET", "/healthz");
        return healthSchema.parse(answer.json);
      },
      async writePolicy(source, mode = "atomic") {
        if (mode === "in-place") {
          await writeFile(decisionRego, source);
          return;
        }
        // Written beside the folder and renamed over the file, as editors and deploy tools do.
        const staged = path.join(tmp, `decision-${randomUUID()}.rego.tmp`);
        await writeFile(staged, source);
        await rename(staged, decisionRego);
      },
      async close() {
        try {
          await running.close();
        } finally {
          await jwksServer.close();
          await rm(tmp, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    await jwks?.close();
    await rm(tmp, { recursive: true, force: true });
    throw error;
  }
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
/** Waits until every MCP server the gateway fronts is connected (its /healthz says so). */
export async function waitForMcpServers(gw: Pick<TestGateway, "health">, timeoutMs = 15_000): Promise<void> {
  await waitFor(
    "the MCP servers to connect",
    async () => {
      const servers = (await gw.health()).mcp_servers ?? [];
      return servers.length > 0 && servers.every((server) => server.connected) ? true : undefined;
    },
    timeoutMs,
  );
}

export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 5000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export { freePort } from "./ports.ts";
