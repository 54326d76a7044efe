/**
 * The package as people install it: `npm pack` in the checkout (its `prepare` builds dist/ from
 * the current sources), `npm install <tarball>` into an empty project in a temp folder, then
 * plain Node there — no tsx, no sources:
 *
 * - `writ/executor` imports from ESM and requires from CommonJS, and loads no gateway code;
 *   `writ` imports and requires from both, `writ/rego` only imports (require() cannot load it:
 *   binaryen, the compiler's code generator, uses top-level await, and Node says so);
 * - `writ token` loads no compiler, and `writ token --help` describes each option; the default
 *   configuration is at dist/config/writ.default.yaml, as the README says;
 * - `node_modules/.bin/writ --help` answers quickly;
 * - `writ serve` in a folder with no configuration starts the embedded default (sample policies,
 *   demo repository) and runs a call through the whole pipeline, its decision logged by the
 *   SQLite writer thread loaded from dist/; started cold, it answers /healthz without compiling
 *   (the sample policies precompiled by the build, so neither the compiler nor binaryen loads;
 *   the start's time is printed, and measured in bench/startup.ts);
 * - the README's plain-Node backend (examples/backend/server.mjs) runs a call the gateway
 *   dispatches to it with a real grant, and refuses that grant for other arguments or twice.
 *
 * Speed: the dependencies are installed with --prefer-offline from npm's cache, with
 * --ignore-scripts; better-sqlite3's native addon is then taken from the checkout's own
 * node_modules when that holds the same version (built from source by `npm install` there, for
 * this Node), and compiled from source (`npm rebuild`, minutes) only when it does not. Once it is
 * installed, its three parts run side by side (each in files and folders of its own): the cases
 * of the installed package one after another, the backend's, and the walkthrough's. Most of their
 * time is spent waiting for the processes they start.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { canonicalCall, onlyOutcome } from "../e2e/api.ts";
import { answerOf, startTestGateway, type TestGateway } from "../support/gateway.ts";
import { repoRoot } from "../support/paths.ts";
import { freePort } from "../support/ports.ts";
import { beyondExecutor, modulesLoadedBy } from "./modules.ts";
import { walkthroughTests } from "./walkthrough.ts";

const run = promisify(execFile);
const SETUP_TIMEOUT_MS = 600_000;

let tmp: string;
let app: string;
let installed: string;
let writ: string;
const children: ChildProcess[] = [];

async function timed<T>(what: string, step: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await step();
  console.log(`${what}: ${((performance.now() - started) / 1000).toFixed(2)} s`);
  return result;
}

const versionOf = async (dir: string) =>
  z.object({ version: z.string() }).parse(JSON.parse(await readFile(path.join(dir, "package.json"), "utf8")))
    .version;

/** better-sqlite3's addon: the checkout's build when it is the same version, else a real rebuild. */
async function provideSqliteAddon(): Promise<void> {
  const ours = path.join(repoRoot, "node_modules/better-sqlite3");
  const theirs = path.join(app, "node_modules/better-sqlite3");
  const addon = "build/Release/better_sqlite3.node";
  if ((await versionOf(ours)) === (await versionOf(theirs))) {
    await mkdir(path.dirname(path.join(theirs, addon)), { recursive: true });
    await copyFile(path.join(ours, addon), path.join(theirs, addon));
  } else {
    await timed("npm rebuild better-sqlite3", () => run("npm", ["rebuild", "better-sqlite3"], { cwd: app }));
  }
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "writ-package-"));
  await timed("npm pack (with the build)", () =>
    run("npm", ["pack", "--pack-destination", tmp, "--loglevel=error"], { cwd: repoRoot }),
  );
  const tarball = (await readdir(tmp)).find((f) => f.endsWith(".tgz"));
  if (tarball === undefined) throw new Error(`npm pack left no tarball in ${tmp}`);
  app = path.join(tmp, "app");
  await mkdir(app);
  await writeFile(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true }));
  const install = ["install", path.join(tmp, tarball), "--prefer-offline", "--ignore-scripts"];
  await timed("npm install <tarball>", () =>
    run("npm", [...install, "--no-audit", "--no-fund", "--loglevel=error"], { cwd: app }),
  );
  await provideSqliteAddon();
  installed = path.join(app, "node_modules/writ");
  writ = path.join(app, "node_modules/.bin/writ");
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
});

async function node(args: string[], cwd = app): Promise<string> {
  return (await run(process.execPath, args, { cwd })).stdout.trim();
}

/** Starts a long-running process and resolves with the first match of `ready` in its stdout. */
function start(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
  ready: RegExp,
) {
  const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  child.stderr?.on("data", (d) => {
    out += d;
  });
  return {
    child,
    ready: new Promise<RegExpExecArray>((resolve, reject) => {
      child.stdout?.on("data", (d) => {
        out += d;
        const match = ready.exec(out);
        if (match) resolve(match);
      });
      child.once("exit", (code) => reject(new Error(`${path.basename(command)} exited (${code}): ${out}`)));
    }),
  };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

describe.concurrent("the installed package", () => {
  // One after another (it.sequential), beside the other two parts.
  it.sequential("ships compiled JavaScript and no TypeScript sources", async () => {
    const files = await readdir(installed, { recursive: true });
    expect(files).toContain(path.join("dist", "executor", "index.js"));
    expect(files).toContain(path.join("dist", "executor", "index.d.ts"));
    expect(files).toContain(path.join("dist", "rego", "runtime", "runtime.wasm"));
    expect(files).toContain(path.join("dist", "config", "writ.default.yaml"));
    expect(files).toContain(path.join("dist", "rego", "compiler-fingerprint.txt"));
    const shipped = `${path.join("dist", "policy", "compiled")}${path.sep}`;
    // The sample policies, precompiled with and without strict builtin errors (the default
    // configuration runs them strict; a configuration may turn that off).
    expect(files.filter((f) => f.startsWith(shipped) && f.endsWith(".json"))).toHaveLength(2);
    expect(files).toContain(path.join("policies", "writ", "decision.rego"));
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
  });

  it.sequential("imports writ/executor from ESM", async () => {
    const names = await node([
      "--input-type=module",
      "-e",
      "const m = await import('writ/executor'); console.log(Object.keys(m).sort().join(' '))",
    ]);
    expect(names.split(" ")).toEqual(
      expect.arrayContaining(["verifyGrant", "requireGrant", "grantRequired"]),
    );
  });

  it.sequential("requires writ/executor and writ from CommonJS, and imports writ/rego there", async () => {
    await writeFile(
      path.join(app, "check.cjs"),
      `const { verifyGrant, MemoryReplayCache } = require("writ/executor");
const required = require("writ");
let rego;
try { require("writ/rego"); rego = "loaded"; } catch (error) { rego = error.code; }
Promise.all([import("writ"), import("writ/rego")]).then(([writ, regoModule]) =>
  console.log(JSON.stringify({ verifyGrant: typeof verifyGrant, cache: typeof MemoryReplayCache, rego,
    required: typeof required.startGateway,
    startGateway: typeof writ.startGateway, buildPolicy: typeof regoModule.buildPolicy })));`,
    );
    expect(JSON.parse(await node(["check.cjs"]))).toEqual({
      verifyGrant: "function",
      cache: "function",
      required: "function",
      rego: "ERR_REQUIRE_ASYNC_MODULE",
      startGateway: "function",
      buildPolicy: "function",
    });
  });

  it.sequential("types the entry points for TypeScript projects, ESM and CommonJS", async () => {
    await writeFile(
      path.join(app, "typed.mts"),
      `import { type GrantClaims, verifyGrant } from "writ/executor";
import { startGateway } from "writ";
import { buildPolicy } from "writ/rego";
export const subject = (claims: GrantClaims): string => claims.sub;
export const used = [verifyGrant, startGateway, buildPolicy];
export const wrong: number = subject(await verifyGrant("grant", { issuer: "writ", audience: "a", keys: { keys: [] }, args: {} }));`,
    );
    await writeFile(
      path.join(app, "typed.cts"),
      `import { verifyGrant } from "writ/executor";
export const verify: typeof verifyGrant = verifyGrant;`,
    );
    const types = path.join(repoRoot, "node_modules/@types");
    const compilerOptions = {
      module: "nodenext",
      strict: true,
      noEmit: true,
      // As most projects set it: checking every declaration file of the dependencies takes 30 s+.
      skipLibCheck: true,
      types: ["node"],
      typeRoots: [types],
    };
    await writeFile(
      path.join(app, "tsconfig.json"),
      JSON.stringify({ compilerOptions, files: ["typed.mts", "typed.cts"] }),
    );
    const tsc = path.join(repoRoot, "node_modules/typescript/bin/tsc");
    const failed = await run(process.execPath, [tsc, "-p", app], { cwd: app }).then(
      () => "",
      (error: unknown) => z.object({ stdout: z.string() }).parse(error).stdout,
    );
    // Exactly the one deliberate mistake: the claims' subject is a string.
    expect(failed.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^typed\.mts\(6,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/,
      ),
    ]);
  }, 60_000);

  it.sequential("loads no gateway code with writ/executor", async () => {
    const dist = path.join(installed, "dist");
    const loaded = await modulesLoadedBy(path.join(dist, "executor/index.js"), {
      cwd: app,
      root: dist,
      tsx: false,
    });
    expect(loaded.own).toContain("executor/verify");
    expect(beyondExecutor(loaded)).toEqual([]);
  });

  it.sequential("answers writ --help (the times are printed, not asserted: a shared machine's are noise)", async () => {
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const { stdout } = await run(writ, ["--help"], { cwd: app });
      times.push(performance.now() - started);
      expect(stdout).toContain("usage: writ <command>");
    }
    console.log(`writ --help: ${times.map((t) => `${(t / 1000).toFixed(2)} s`).join(", ")}`);
  });

  it.sequential("runs writ token without loading the compiler, and describes its options with --help", async () => {
    const list = path.join(tmp, "token-modules.txt");
    const hooks = path.join(repoRoot, "test/support/resolved-modules.mjs");
    const { stdout } = await run(
      process.execPath,
      ["--import", hooks, path.join(installed, "bin/writ.mjs"), "token", "--sub", "alice"],
      { cwd: app, env: { ...process.env, WRIT_TEST_RESOLVED_MODULES: list } },
    );
    expect(stdout.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const resolved = (await readFile(list, "utf8")).split("\n");
    expect(resolved.some((url) => url.endsWith("/dist/cli/token.js"))).toBe(true);
    expect(resolved.filter((url) => /\/binaryen\/|\/dist\/rego\//.test(url))).toEqual([]);
    const help = (await run(writ, ["token", "--help"], { cwd: app })).stdout;
    for (const option of ["--sub", "--tenant", "--roles", "--scopes", "--ttl", "--config"]) {
      expect(help).toMatch(new RegExp(`^\\s+${option} `, "m"));
    }
  });

  it.sequential("has its default configuration where the README says, with the sample policies it names", async () => {
    await copyFile(path.join(installed, "dist/config/writ.default.yaml"), path.join(app, "my-writ.yaml"));
    await cp(path.join(installed, "policies"), path.join(app, "policies"), { recursive: true });
    const { stdout } = await run(writ, ["config", "check", "--config", "my-writ.yaml"], { cwd: app });
    expect(stdout).toContain(`policy in ${path.join(app, "policies")}`);
  });

  it.sequential("serves the embedded default from an empty folder, cold, without compiling, and runs a call through it", async () => {
    // A fresh process in a fresh folder (no .writ/ yet): the sample policies load from the entry
    // the build precompiled into dist/policy/compiled/, never compiled here.
    const empty = path.join(tmp, "empty");
    await mkdir(empty);
    const started = performance.now();
    const serve = start(writ, ["serve", "--port", "0"], { cwd: empty }, /listening on (\S+)/);
    const [, url = ""] = await serve.ready;
    const health = await fetch(`${url}/healthz`);
    const time = performance.now() - started;
    expect(health.status).toBe(200);
    await proposeThrough(url, empty);
    await stop(serve.child);
    expect(serve.child.exitCode).toBe(0);
    // Nothing was compiled: the writable cache (.writ/policy-cache/) was never needed.
    expect((await readdir(path.join(empty, ".writ"))).includes("policy-cache")).toBe(false);
    // Printed for the record; the start time is measured on purpose in bench/, never asserted.
    console.log(`writ serve, cold start to /healthz: ${(time / 1000).toFixed(2)} s`);
  });
});

async function proposeThrough(url: string, cwd: string): Promise<void> {
  const { stdout: token } = await run(writ, ["token", "--sub", "alice"], { cwd });
  const response = await fetch(`${url}/v1/proposals`, {
    method: "POST",
    headers: { authorization: `Bearer ${token.trim()}`, "content-type": "application/json" },
    body: JSON.stringify({
      format: "canonical",
      execute: true,
      payload: canonicalCall("repo.read", { workspace: "ws-demo", path: "README.md" }),
    }),
  });
  const outcome = onlyOutcome(await answerOf(response));
  expect(outcome.decision).toBe("allow");
  expect(outcome.result?.structured_content).toHaveProperty("content");
}

describe.concurrent("the README's plain-Node backend (examples/backend/server.mjs)", () => {
  let gw: TestGateway;
  let backendUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    backendUrl = `http://127.0.0.1:${port}`;
    gw = await startTestGateway({
      configure: (document) => ({
        ...document,
        tools: z
          .array(z.record(z.string(), z.unknown()))
          .parse(document.tools)
          .map((tool) =>
            tool.name === "create_payment_draft"
              ? { ...tool, backend: { kind: "http", method: "POST", url: `${backendUrl}/drafts` } }
              : tool,
          ),
      }),
    });
    await copyFile(path.join(repoRoot, "examples/backend/server.mjs"), path.join(app, "server.mjs"));
    const backend = start(
      process.execPath,
      ["server.mjs"],
      { cwd: app, env: { ...process.env, PORT: String(port), WRIT_URL: gw.url } },
      /listening on/,
    );
    await backend.ready;
  });

  afterAll(async () => {
    await gw?.close();
  });

  it("runs a call Writ dispatches to it, and refuses its grant for other arguments or a second time", async () => {
    const args = { account: "acct-alice", amount: 40, currency: "EUR" };
    const outcome = onlyOutcome(
      await gw.propose(await gw.token("alice"), {
        format: "canonical",
        execute: true,
        payload: canonicalCall("create_payment_draft", args),
      }),
    );
    expect(outcome.error).toBeUndefined();
    expect(outcome.result?.structured_content).toMatchObject({ status: "draft", amount: 40 });
    expect(outcome.grant?.audience).toBe(backendUrl);

    const grant = outcome.grant?.token ?? "";
    const replay = async (body: unknown) => {
      const response = await fetch(`${backendUrl}/drafts`, {
        method: "POST",
        headers: { "x-writ-grant": grant, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: z.object({ code: z.string() }).parse(await response.json()) };
    };
    expect(await replay({ ...args, amount: 4000 })).toMatchObject({
      status: 403,
      body: { code: "args_mismatch" },
    });
    expect(await replay(args)).toMatchObject({ status: 403, body: { code: "replayed" } });
  });
});

describe.concurrent("the README's walkthrough, from zero to your own tool (test/package/walkthrough.ts)", () => {
  walkthroughTests(() => app);
});
