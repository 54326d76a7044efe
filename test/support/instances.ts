/**
 * Real Writ processes (`node bin/writ.mjs serve`) on one store: several on a PostgreSQL database
 * (the setup of a scaled-out deployment), or one on a SQLite file, for the race and crash tests.
 * Each instance is a child process started with a configuration written to a temp folder, sharing
 *
 * - the store (`store.postgres.url` or `store.sqlite`), and with PostgreSQL the grant signing keys,
 * - a temp copy of `policies/`,
 * - one trusted identity issuer whose JWKS is served over HTTP on 127.0.0.1.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { canonicalCall, type Outcome, onlyOutcome, README_ARGS } from "../e2e/api.ts";
import { type JwksServer, jwksOf, makeKey, startJwksServer, type TestKey } from "../identity/helpers.ts";
import { defaultConfigDocument } from "./config-file.ts";
import { answerOf, TEST_AUDIENCE, TEST_ISSUER, testToken } from "./gateway.ts";
import { repoRoot } from "./paths.ts";

export interface WritProcess {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  child: ChildProcess;
  /** What the process wrote to stderr so far (the last 8 KB). */
  stderr(): string;
  /** SIGTERM, and wait for the exit. */
  stop(): Promise<void>;
}

/** Where the instances keep their state: a PostgreSQL URL, or a SQLite file. */
export type DeploymentStore = { postgres: string } | { sqlite: string };

export interface Deployment {
  store: DeploymentStore;
  /** The configuration file every instance (and `writ logs`) reads. */
  configFile: string;
  /** The policy folder every instance watches. */
  policyDir: string;
  /** A bearer token from the test identity provider. */
  token(subject: string, roles?: string[]): Promise<string>;
  /** Starts one more instance. */
  start(): Promise<WritProcess>;
  close(): Promise<void>;
}

const LISTENING = /writ listening on (http:\/\/\S+)/;
/** How long a `writ serve` child may take to listen: generous, since a loaded CI machine starts tsx slowly. */
const START_LIMIT_S = 90;
/** The timeout of a test or hook that starts `writ serve` children: their start's limit, and room for the work. */
export const WITH_CHILDREN_MS = (START_LIMIT_S + 30) * 1000;

/**
 * `configure` changes the configuration document before it is written (tools, scheduling, …);
 * it gets the deployment's temp folder, e.g. to write a policy into `<tmp>/policies`.
 */
export async function startDeployment(
  store: DeploymentStore,
  configure?: (document: Record<string, unknown>, tmp: string) => Promise<Record<string, unknown>>,
): Promise<Deployment> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), "writ-scale-"));
  const processes: WritProcess[] = [];
  let jwks: JwksServer | undefined;
  try {
    const policyDir = path.join(tmp, "policies");
    await cp(path.join(repoRoot, "policies"), policyDir, { recursive: true });
    const issuerKey: TestKey = await makeKey("EdDSA");
    jwks = await startJwksServer(jwksOf(issuerKey));
    const configFile = path.join(tmp, "writ.json");
    // JSON is YAML; relative paths are resolved against this file's folder.
    const defaults = await defaultConfigDocument();
    const document: Record<string, unknown> = {
      ...defaults,
      server: { host: "127.0.0.1", port: 0 },
      store: "postgres" in store ? { postgres: { url: store.postgres, max_connections: 10 } } : store,
      policy: { dir: policyDir, watch: true },
      identity: {
        issuers: [
          { issuer: TEST_ISSUER, audience: TEST_AUDIENCE, algorithms: ["EdDSA"], jwks_uri: jwks.url },
        ],
        dev_issuer: { enabled: false },
      },
      grants: { issuer: "writ", default_ttl_s: 300, max_ttl_s: 600 },
    };
    await writeFile(configFile, JSON.stringify(configure ? await configure(document, tmp) : document));
    const server = jwks;
    return {
      store,
      configFile,
      policyDir,
      token: (subject, roles = ["developer"]) => testToken(issuerKey, subject, { roles }),
      async start() {
        const instance = await startWrit(configFile);
        processes.push(instance);
        return instance;
      },
      async close() {
        try {
          await Promise.all(processes.map((p) => p.stop()));
        } finally {
          await server.close();
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

/** Starts `writ serve --config <file> --port 0` and waits for its "listening on" line. */
export async function startWrit(configFile: string): Promise<WritProcess> {
  const child = spawn(
    process.execPath,
    [path.join(repoRoot, "bin", "writ.mjs"), "serve", "--config", configFile, "--port", "0"],
    {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
      // The test's own database selection must not leak into the child.
      env: { ...process.env, WRIT_DATABASE_URL: "" },
    },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8192);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`writ serve did not start within ${START_LIMIT_S} s:\n${stderr}`));
    }, START_LIMIT_S * 1000);
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = LISTENING.exec(stdout);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`writ serve exited with ${code} before listening:\n${stderr}`));
    });
  });
  child.stdout?.resume();
  return {
    url,
    child,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

/**
 * Sixteen callers propose a README read to `victim` in a loop; once it has answered `answered`
 * proposals with a grant, it is killed with SIGKILL. The granted outcomes it answered, and how
 * many callers then failed (the requests in flight when it died).
 */
export async function killMidLoad(
  victim: WritProcess,
  token: string,
  answered: number,
): Promise<{ granted: Outcome[]; failures: number }> {
  const granted: Outcome[] = [];
  let failures = 0;
  let killed = false;
  const caller = async () => {
    while (!killed) {
      try {
        const response = await fetch(`${victim.url}/v1/proposals`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ format: "canonical", payload: canonicalCall("repo_read", README_ARGS) }),
        });
        const outcome = onlyOutcome(await answerOf(response));
        if (outcome.grant !== undefined) granted.push(outcome);
      } catch {
        failures += 1;
        return;
      }
    }
  };
  const callers = Array.from({ length: 16 }, caller);
  // Killed while requests are in flight, once it has answered a good number.
  while (granted.length < answered) await new Promise((resolve) => setTimeout(resolve, 5));
  victim.child.kill("SIGKILL");
  await new Promise<void>((resolve) => victim.child.once("exit", () => resolve()));
  killed = true;
  await Promise.all(callers);
  return { granted, failures };
}
