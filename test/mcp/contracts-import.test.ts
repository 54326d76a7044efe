/**
 * `contracts: import` at serve: a fronted server's tools get contracts from its own lists, so a
 * new tool appears without a hand edit, and each is still decided by the policy (a tool the
 * policy does not allow is denied and not listed). Imported tools are committing with
 * idempotency none whatever their annotations claim, unless the entry trusts hints; a configured
 * contract keeps the tool it governs. The reference server (server-everything) is fronted twice,
 * once with and once without trusted hints, and a small server of this test adds a tool while it
 * runs.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, parseConfig } from "../../src/config/index.ts";
import { contractImport } from "../../src/dispatch/mcp/config.ts";
import { startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
import { connectMcp } from "../support/mcp-client.ts";
import { repoRoot } from "../support/paths.ts";

const EVERYTHING = path.join(repoRoot, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const SDK = (file: string) =>
  pathToFileURL(path.join(repoRoot, "node_modules/@modelcontextprotocol/sdk/dist/esm", file)).href;

/** A server whose `grow` tool adds a read-only tool `sprouted` (the SDK then sends list_changed). */
const GARDEN = `import { McpServer } from ${JSON.stringify(SDK("server/mcp.js"))};
import { StdioServerTransport } from ${JSON.stringify(SDK("server/stdio.js"))};
const server = new McpServer({ name: "garden", version: "1.0.0" });
server.registerTool("grow", { description: "Adds the tool sprouted" }, async () => {
  server.registerTool("sprouted", { description: "A tool that was not there at start", annotations: { readOnlyHint: true } },
    async () => ({ content: [{ type: "text", text: "hello from a new tool" }] }));
  return { content: [{ type: "text", text: "grown" }] };
});
await server.connect(new StdioServerTransport());
`;

const POLICY = `package writ

import rego.v1

default decision := {"decision": "deny", "reasons": [{"code": "no_rule_allows", "message": "no policy rule allows this action", "visible_to_model": true}]}

allow := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}}

# What a contract says only reads, a viewer may call: an imported tool says so only when its
# server's hints are trusted.
decision := allow if {
	input.action.side_effect == "none"
	"viewer" in input.subject.roles
}

decision := allow if {
	input.action.name in {"everything.get-sum", "echo.say", "garden.grow", "garden.sprouted"}
	"viewer" in input.subject.roles
}
`;

let dir: string;
let gw: TestGateway;
let viewer: Client;

const everythingServer = (name: string, contracts: unknown) => ({
  name,
  transport: "stdio",
  command: process.execPath,
  args: [EVERYTHING, "stdio"],
  contracts,
});

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "writ-contracts-import-serve-"));
  await mkdir(path.join(dir, "policy", "writ"), { recursive: true });
  await writeFile(path.join(dir, "policy", "writ", "decision.rego"), POLICY);
  await writeFile(path.join(dir, "garden.mjs"), GARDEN);
  gw = await startTestGateway({
    configure: (document) => ({
      ...document,
      // A hand-written contract for everything's echo: it wins over the import.
      tools: [
        {
          name: "echo.say",
          version: "1",
          description: "Says the message back (written by hand)",
          input_schema: {
            type: "object",
            properties: { message: { type: "string" } },
            required: ["message"],
          },
          side_effect: "none",
          idempotency: "natural",
          backend: { kind: "mcp", server: "everything", tool: "echo" },
          model_views: [{ family: "default", name: "say" }],
        },
      ],
      limits: [],
      history: [],
      mcp: {
        servers: [
          everythingServer("everything", "import"),
          everythingServer("trusted", { import: true, trust_hints: true }),
          {
            name: "garden",
            transport: "stdio",
            command: process.execPath,
            args: [path.join(dir, "garden.mjs")],
            contracts: "import",
          },
        ],
      },
      policy: { ...z.record(z.string(), z.unknown()).parse(document.policy), dir: path.join(dir, "policy") },
    }),
  });
  viewer = await connectMcp(gw.url, await gw.token("vic", { roles: ["viewer"] }));
}, 60_000);

afterAll(async () => {
  await viewer?.close();
  await gw?.close();
  await rm(dir, { recursive: true, force: true });
});

async function listed(): Promise<string[]> {
  return (await viewer.listTools()).tools.map((tool) => tool.name);
}

async function call(name: string, args: Record<string, unknown> = {}) {
  return CallToolResultSchema.parse(await viewer.callTool({ name, arguments: args }));
}

describe("contracts: import at serve", () => {
  it("imports every tool with conservative effect fields unless the entry trusts the server's hints", () => {
    const contracts = gw.gateway.contracts;
    // server-everything claims get-sum is read-only and idempotent: not trusted by default.
    expect(contracts.get("everything.get-sum", "1")).toMatchObject({
      side_effect: "committing",
      idempotency: "none",
    });
    expect(contracts.get("trusted.get-sum", "1")).toMatchObject({
      side_effect: "none",
      idempotency: "natural",
    });
    expect(contracts.get("trusted.toggle-simulated-logging", "1")?.side_effect).toBe("committing");
    expect(contracts.get("trusted.get-sum", "1")?.backend).toEqual({
      kind: "mcp",
      server: "trusted",
      tool: "get-sum",
    });
    // Resources and prompts too, which only read by the protocol.
    expect(
      contracts.list().filter((c) => c.backend.kind === "mcp_prompt" && c.backend.server === "everything")
        .length,
    ).toBeGreaterThan(0);
  });

  it("keeps a configured contract for the tool it governs", () => {
    expect(gw.gateway.contracts.get("everything.echo", "1")).toBeUndefined();
    expect(gw.gateway.contracts.resolve("say", "mcp")?.description).toBe(
      "Says the message back (written by hand)",
    );
  });

  it("lists and runs only what the policy allows; a name another server took is shown as server_tool", async () => {
    const names = await listed();
    // everything's get-sum by name, trusted's read-only tools by their (claimed) side_effect.
    expect(names).toEqual(
      expect.arrayContaining(["say", "get-sum", "trusted_get-sum", "trusted_get-env", "grow"]),
    );
    // Imported but not allowed: everything's own tools (committing, not named), trusted's effectful ones.
    for (const hidden of [
      "get-env",
      "trusted_toggle-simulated-logging",
      "toggle-simulated-logging",
      "sprouted",
    ]) {
      expect(names).not.toContain(hidden);
    }
    const sum = await call("get-sum", { a: 2, b: 3 });
    expect(sum.isError).toBeFalsy();
    expect(JSON.stringify(sum.content)).toContain("5");
    const denied = await call("get-env");
    expect(denied.isError).toBe(true);
    expect(denied.structuredContent).toMatchObject({ error: { category: "policy_denied" } });
  });

  it("imports a tool the server adds while it runs, still decided by the policy", async () => {
    expect(gw.gateway.contracts.get("garden.sprouted", "1")).toBeUndefined();
    expect((await call("grow")).isError).toBeFalsy();
    await waitFor("the new tool in tools/list", async () =>
      (await listed()).includes("sprouted") ? true : undefined,
    );
    expect(gw.gateway.contracts.get("garden.sprouted", "1")?.side_effect).toBe("committing");
    const sprouted = await call("sprouted");
    expect(sprouted.isError).toBeFalsy();
    expect(sprouted.content).toEqual([{ type: "text", text: "hello from a new tool" }]);
  });
});

describe("the contracts option of an MCP server entry", () => {
  const configWith = (contracts: unknown) =>
    parseConfig(
      { mcp: { servers: [{ name: "s", transport: "http", url: "http://127.0.0.1:9/mcp", contracts }] } },
      dir,
    );

  it("reads import (hints not trusted) and {import: true, trust_hints}", () => {
    const [plain] = configWith("import").mcp.servers;
    const [trusted] = configWith({ import: true, trust_hints: true }).mcp.servers;
    const [defaulted] = configWith({ import: true }).mcp.servers;
    const [none] = configWith(undefined).mcp.servers;
    expect([plain, trusted, defaulted, none].map((server) => server && contractImport(server))).toEqual([
      { trustHints: false },
      { trustHints: true },
      { trustHints: false },
      undefined,
    ]);
  });

  it("refuses anything else, at its path", () => {
    expect(() => configWith("copy")).toThrow(ConfigError);
    expect(() => configWith({ import: true, trust: true })).toThrow(/\/mcp\/servers\/0\/contracts/);
  });
});
