/**
 * MCP through Writ against MCP straight to the server, in the same run. An echo MCP server (the
 * SDK's McpServer over Streamable HTTP on loopback) offers `echo` (checks Writ's grant with
 * `grantRequired`) and `echo_direct` (no check). Measured, each for a fixed time with several
 * concurrent SDK clients:
 * - direct: clients call `echo_direct` on the server itself;
 * - writ-api: the same call through POST /v1/proposals with execute (no MCP front);
 * - writ-mcp: clients call `echo` on Writ's /mcp (JWT, policy, grant, durable log entry,
 *           dispatch to the server with the grant, grant verification there, result handling),
 *           as a v1 SDK client does: the 2025-11-25 revision (`initialize`, then the calls);
 * - writ-mcp-modern: the same calls through the v2 SDK's `Client` (`@modelcontextprotocol/client`)
 *           pinned to 2026-07-28 (`server/discover`, no `initialize`, every request with its
 *           `_meta` envelope), answered by the v2 SDK's server (src/mcp/modern.ts); the bench
 *           fails unless each client negotiated that revision and sent no `initialize`.
 *
 * - writ-mcp-sdk (with `--sdk`): the same, with /mcp's fast path off (src/mcp/fast-path.ts), every
 *           call answered by a per-POST SDK server as before it: what the fast path saves, in one run;
 * - writ-mcp-modern-sdk (with `--sdk`): the same for 2026-07-28, every call answered by the v2
 *           SDK's entry and a per-request server instead of src/mcp/modern-fast-path.ts.
 *
 * Run: npx tsx bench/mcp.ts [seconds-per-run] [clients] [--warmup <seconds>] [--sdk] [--json <file>]
 *                           [--profile <prefix>] [--pairs <n>]
 *
 * Each run is preceded by an uncounted warm-up of the same calls (`--warmup`, 2 s by default):
 * without it the first routes measured ran colder code than the later ones.
 *
 * `--pairs <n>` then runs n pairs of direct and writ-mcp back to back (order alternating) and
 * prints the median of the pairs' ratios, which the machine's other load sways less (`pairs`).
 *
 * `--json <file>` writes every number printed, with the date, Node's version, the CPU, the git
 * commit and the configuration. `--profile <prefix>` writes a CPU profile of each phase's measured
 * calls, `<prefix>-<phase>.cpuprofile` (`npx tsx bench/lib/profile.ts <file>` summarizes one).
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type ServerType, serve } from "@hono/node-server";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Hono } from "hono";
import { createRemoteJWKSet } from "jose";
import { z } from "zod";
import { grantRequired } from "../src/executor/index.ts";
import { useFastPath } from "../src/mcp/fast-path.ts";
import { startGateway } from "../src/server.ts";
import { aliceToken, localGatewayConfig } from "./lib/local-gateway.ts";
import { median } from "./lib/stats.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const cli = parseArgs({
  allowPositionals: true,
  options: {
    json: { type: "string" },
    profile: { type: "string" },
    sdk: { type: "boolean" },
    pairs: { type: "string" },
    warmup: { type: "string" },
  },
});
const seconds = Number(cli.positionals[0] ?? "5");
const clients = Number(cli.positionals[1] ?? "8");
const warmup = Number(cli.values.warmup ?? "2");
const dir = await mkdtemp(path.join(tmpdir(), "writ-bench-mcp-"));

// ------------------------------------------------------------------------- the echo server
let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
function echoServer(): McpServer {
  const server = new McpServer({ name: "echo", version: "1.0.0" });
  const echo = async (args: { text: string }) => ({
    content: [{ type: "text" as const, text: args.text }],
    structuredContent: { text: args.text },
  });
  server.registerTool("echo_direct", { inputSchema: { text: z.string() } }, echo);
  server.registerTool(
    "echo",
    { inputSchema: { text: z.string() } },
    grantRequired(
      {
        issuer: "writ",
        audience: "mcp:echo",
        keys: (header, token) => {
          if (!jwks) throw new Error("no key set yet");
          return jwks(header, token);
        },
        action: { name: "echo.say" },
      },
      echo,
    ),
  );
  return server;
}
const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
const upstreamApp = new Hono();
upstreamApp.all("/mcp", async (c) => {
  const id = c.req.header("mcp-session-id");
  const known = id === undefined ? undefined : sessions.get(id);
  if (known) return known.handleRequest(c.req.raw);
  const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    enableJsonResponse: true,
    onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
  });
  await echoServer().connect(transport);
  return transport.handleRequest(c.req.raw);
});
let upstream: ServerType | undefined;
const upstreamPort = await new Promise<number>((resolve) => {
  upstream = serve({ fetch: upstreamApp.fetch, hostname: "127.0.0.1", port: 0 }, (info) =>
    resolve(info.port),
  );
});
const upstreamUrl = `http://127.0.0.1:${upstreamPort}/mcp`;

// ------------------------------------------------------------------------- the gateway
const policyDir = path.join(dir, "policies");
await mkdir(path.join(policyDir, "writ"), { recursive: true });
await writeFile(
  path.join(policyDir, "writ", "decision.rego"),
  `package writ
import rego.v1
default decision := {"decision": "deny", "reasons": []}
decision := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}} if input.action.name == "echo.say"
`,
);

const config = await localGatewayConfig(dir, {
  policyDir,
  overrides: {
    demo: { repository: false },
    seeds: { resources: [] },
    credentials: {},
    // No limits or history facts: the default's name the demo tools this configuration replaces.
    limits: [],
    history: [],
    tools: [
      {
        name: "echo.say",
        version: "1",
        description: "Echo a text",
        input_schema: { type: "object", required: ["text"], properties: { text: { type: "string" } } },
        side_effect: "none",
        idempotency: "natural",
        backend: { kind: "mcp", server: "echo", tool: "echo" },
        model_views: [{ family: "mcp", name: "echo" }],
      },
    ],
    mcp: { servers: [{ name: "echo", transport: "http", url: upstreamUrl }] },
  },
});
const running = await startGateway(config);
jwks = createRemoteJWKSet(new URL(`${running.url}/.well-known/jwks.json`));
const token = await aliceToken(dir);

// ------------------------------------------------------------------------- the runs
/** The caller of one client: a tool call that says whether it succeeded, and its closing. */
interface Caller {
  call(tool: string): Promise<boolean>;
  close(): Promise<void>;
}

/** What both SDK lines' clients offer the bench. */
interface SdkClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<object>;
  close(): Promise<void>;
}

function callerOf(client: SdkClient): Caller {
  return {
    call: async (tool) => {
      const result = await client.callTool({ name: tool, arguments: { text: "hello" } });
      return !("isError" in result && result.isError === true);
    },
    close: () => client.close(),
  };
}

/** A v1 SDK client (2025-11-25: `initialize`, then the calls). */
async function connect(url: string, headers: Record<string, string> = {}): Promise<Caller> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return callerOf(client);
}

const MODERN_REVISION = "2026-07-28";
/** `initialize` requests the v2 clients sent (the bench fails unless none). */
let modernInitializes = 0;

/**
 * A v2 SDK client pinned to 2026-07-28 (`server/discover`, then every request with its `_meta`
 * envelope); throws unless it negotiated that revision.
 */
async function connectModern(url: string, headers: Record<string, string> = {}): Promise<Caller> {
  const client = new ModernClient(
    { name: "bench-modern", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: MODERN_REVISION } } },
  );
  const counting: typeof fetch = (input, init) => {
    if (new Headers(init?.headers).get("mcp-method") === "initialize") modernInitializes += 1;
    return fetch(input, init);
  };
  await client.connect(new ModernTransport(new URL(url), { requestInit: { headers }, fetch: counting }));
  const era = client.getProtocolEra();
  const version = client.getNegotiatedProtocolVersion();
  if (era !== "modern" || version !== MODERN_REVISION) {
    throw new Error(`the v2 client negotiated ${era ?? "nothing"} ${version ?? ""}, not ${MODERN_REVISION}`);
  }
  return callerOf(client);
}

interface Measured {
  label: string;
  calls_per_s: number;
  p50_ms: number;
  p99_ms: number;
  failures: number;
  /** Process CPU time (user + system) per call: every side runs in this process. */
  cpu_ms_per_call: number;
}

/**
 * `clients` loops calling `once` (true: success) for `seconds`, after the warm-up; prints and
 * returns the numbers. With `--profile`, the measured calls (not the warm-up) are profiled.
 */
async function measure(label: string, once: (worker: number) => Promise<boolean>): Promise<Measured> {
  // Uncounted first: every route runs its code warm (the first measured is not penalized).
  const warmUntil = performance.now() + warmup * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, worker) => {
      while (performance.now() < warmUntil) await once(worker);
    }),
  );
  const session = cli.values.profile === undefined ? undefined : new Session();
  if (session !== undefined) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
  }
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  const cpuBefore = process.cpuUsage();
  let failures = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, worker) => {
      while (performance.now() < deadline) {
        const started = performance.now();
        if (!(await once(worker))) failures += 1;
        latencies.push(performance.now() - started);
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  if (session !== undefined) {
    const { profile } = await session.post("Profiler.stop");
    const file = `${cli.values.profile}-${label}.cpuprofile`;
    await mkdir(path.dirname(path.resolve(file)), { recursive: true });
    await writeFile(file, JSON.stringify(profile));
    session.disconnect();
    console.log(`profile of ${label}: ${file}`);
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  const measured = {
    label,
    calls_per_s: latencies.length / seconds,
    p50_ms: at(0.5),
    p99_ms: at(0.99),
    failures,
    cpu_ms_per_call: (cpu.user + cpu.system) / 1000 / Math.max(1, latencies.length),
  };
  console.log(
    `${label.padEnd(15)} ${measured.calls_per_s.toFixed(0).padStart(6)} calls/s  p50 ${measured.p50_ms.toFixed(2)} ms  p99 ${measured.p99_ms.toFixed(2)} ms  cpu ${measured.cpu_ms_per_call.toFixed(3)} ms/call  failures ${failures}`,
  );
  return measured;
}

async function run(
  label: string,
  url: string,
  tool: string,
  headers: Record<string, string> = {},
  connectWith: typeof connect = connect,
): Promise<Measured> {
  const pool = await Promise.all(Array.from({ length: clients }, () => connectWith(url, headers)));
  try {
    return await measure(label, async (worker) => (await pool[worker]?.call(tool)) === true);
  } finally {
    // Also when the run failed: an open client's stream would keep the servers from closing.
    for (const client of pool) await client.close();
  }
}

/** The same call through Writ's HTTP API (POST /v1/proposals with execute), no MCP on the front. */
function viaApi(label: string) {
  const body = JSON.stringify({
    format: "mcp",
    execute: true,
    payload: {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hello" } },
    },
  });
  return measure(label, async () => {
    const response = await fetch(`${running.url}/v1/proposals`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body,
    });
    const answer = z
      .object({ results: z.array(z.object({ result: z.unknown().optional() })) })
      .parse(await response.json());
    return answer.results[0]?.result !== undefined;
  });
}

/**
 * `--pairs n`: n pairs of a direct run and a writ-mcp run (each as above, order alternating from
 * pair to pair), and the median of the pairs' ratios. The single runs above are a minute apart, and
 * this machine's other load (and its state after startup) sways them: the direct run alone varied
 * from 606 to 1,049 calls/s between runs of the same commit. Runs seconds apart see about the same.
 */
async function pairs(n: number) {
  if (n <= 0) return undefined;
  const headers = { authorization: `Bearer ${token}` };
  const each: { calls: number; cpu: number }[] = [];
  for (let i = 0; i < n; i++) {
    const order = i % 2 === 0 ? ["direct", "writ-mcp"] : ["writ-mcp", "direct"];
    const got: Record<string, Measured> = {};
    for (const label of order) {
      got[label] =
        label === "direct"
          ? await run("direct", upstreamUrl, "echo_direct")
          : await run("writ-mcp", `${running.url}/mcp`, "echo", headers);
    }
    const d = got.direct;
    const w = got["writ-mcp"];
    if (d === undefined || w === undefined) throw new Error("a pair lacks a run");
    each.push({ calls: w.calls_per_s / d.calls_per_s, cpu: d.cpu_ms_per_call / w.cpu_ms_per_call });
  }
  const result = {
    "writ-mcp/direct": median(each.map((p) => p.calls)),
    "writ-mcp/direct (cpu)": median(each.map((p) => p.cpu)),
    each,
  };
  console.log(
    `${n} pairs: writ-mcp/direct median ${result["writ-mcp/direct"].toFixed(3)} (${each.map((p) => p.calls.toFixed(3)).join(" ")}); by CPU a call ${result["writ-mcp/direct (cpu)"].toFixed(3)} (${each.map((p) => p.cpu.toFixed(3)).join(" ")})`,
  );
  return result;
}

/** The commit measured, with "+changes" when the worktree differs from it. */
function gitCommit(): string {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8" }).trim();
  try {
    return `${git("rev-parse", "HEAD")}${git("status", "--porcelain", "--untracked-files=no") === "" ? "" : "+changes"}`;
  } catch {
    return "unknown";
  }
}

try {
  console.log(
    `${clients} concurrent SDK clients, ${seconds} s per run after ${warmup} s of warm-up; load average ${loadavg()
      .map((load) => load.toFixed(2))
      .join(" ")}`,
  );
  const direct = await run("direct", upstreamUrl, "echo_direct");
  const api = await viaApi("writ-api");
  const writ = await run("writ-mcp", `${running.url}/mcp`, "echo", { authorization: `Bearer ${token}` });
  // The fast paths off and on in turns after the first run of the route (which warmed the code
  // up), off-on-on-off so that neither side gains from running later; the less loaded run of each
  // side is kept (the machine may be shared).
  const headers = { authorization: `Bearer ${token}` };
  const turns = async (label: string, connectClient?: typeof connectModern) => {
    let off: Measured | undefined;
    let on: Measured | undefined;
    for (const fastPath of [false, true, true, false]) {
      useFastPath(fastPath);
      const measured = await run(
        fastPath ? label : `${label}-sdk`,
        `${running.url}/mcp`,
        "echo",
        headers,
        connectClient,
      );
      useFastPath(true);
      if (fastPath && (on === undefined || measured.cpu_ms_per_call < on.cpu_ms_per_call)) on = measured;
      if (!fastPath && (off === undefined || measured.cpu_ms_per_call < off.cpu_ms_per_call)) off = measured;
    }
    return off === undefined || on === undefined ? undefined : { off, on };
  };
  const legacyTurns = cli.values.sdk === true ? await turns("writ-mcp") : undefined;
  const sdk = legacyTurns?.off;
  const fast = legacyTurns?.on;
  const modern = await run("writ-mcp-modern", `${running.url}/mcp`, "echo", headers, connectModern);
  const modernTurns = cli.values.sdk === true ? await turns("writ-mcp-modern", connectModern) : undefined;
  if (modernInitializes > 0) throw new Error(`the 2026-07-28 clients sent ${modernInitializes} initialize`);
  const paired = await pairs(Number(cli.values.pairs ?? "0"));
  // Throughput ratios, and the same by CPU time per call (steadier on a shared machine).
  const ratios = {
    "writ-mcp/direct": writ.calls_per_s / direct.calls_per_s,
    "writ-mcp-modern/direct": modern.calls_per_s / direct.calls_per_s,
    "writ-mcp-modern/writ-mcp": modern.calls_per_s / writ.calls_per_s,
    "writ-api/direct": api.calls_per_s / direct.calls_per_s,
    "writ-mcp/direct (cpu)": direct.cpu_ms_per_call / writ.cpu_ms_per_call,
    "writ-mcp-modern/direct (cpu)": direct.cpu_ms_per_call / modern.cpu_ms_per_call,
    "writ-mcp-modern/writ-mcp (cpu)": writ.cpu_ms_per_call / modern.cpu_ms_per_call,
    "writ-api/direct (cpu)": direct.cpu_ms_per_call / api.cpu_ms_per_call,
    ...(sdk === undefined || fast === undefined
      ? {}
      : {
          "writ-mcp-sdk/direct": sdk.calls_per_s / direct.calls_per_s,
          "writ-mcp-sdk/direct (cpu)": direct.cpu_ms_per_call / sdk.cpu_ms_per_call,
          // The best of the turns on each side: the fast path's saving.
          "writ-mcp/writ-mcp-sdk (cpu)": sdk.cpu_ms_per_call / fast.cpu_ms_per_call,
        }),
    ...(modernTurns === undefined
      ? {}
      : {
          "writ-mcp-modern/writ-mcp-modern-sdk": modernTurns.on.calls_per_s / modernTurns.off.calls_per_s,
          "writ-mcp-modern/writ-mcp-modern-sdk (cpu)":
            modernTurns.off.cpu_ms_per_call / modernTurns.on.cpu_ms_per_call,
        }),
  };
  console.log(
    Object.entries(ratios)
      .map(([name, ratio]) => `${name}: ${ratio.toFixed(3)}`)
      .join("  "),
  );
  if (cli.values.json !== undefined) {
    const report = {
      bench: "mcp",
      date: new Date().toISOString(),
      node: process.version,
      cpu: { model: cpus()[0]?.model ?? "unknown", count: cpus().length },
      commit: gitCommit(),
      config: {
        seconds,
        warmup,
        clients,
        store: "sqlite",
        tool: "echo",
        arguments: { text: "hello" },
        revisions: { "writ-mcp": "2025-11-25", "writ-mcp-modern": MODERN_REVISION },
      },
      load_average: loadavg(),
      runs: [
        direct,
        api,
        writ,
        modern,
        ...(sdk === undefined || fast === undefined ? [] : [sdk, fast]),
        ...(modernTurns === undefined ? [] : [modernTurns.off, modernTurns.on]),
      ],
      ratios,
      ...(paired === undefined ? {} : { pairs: paired }),
    };
    await writeFile(cli.values.json, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`numbers: ${cli.values.json}`);
  }
} finally {
  await running.close();
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
  await rm(dir, { recursive: true, force: true });
}
