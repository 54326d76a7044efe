/**
 * `writ contracts import` against a third-party server from npm that no other test fronts: the
 * knowledge-graph memory server (`@modelcontextprotocol/server-memory`, over stdio). Its output
 * must give a contract for every tool with the server's own schemas, read-only tools
 * `side_effect: none` (marked as the server's claim), load through Writ's configuration parser
 * unchanged and serve; `--check` reports drift with exit 1; a server that cannot be started,
 * reached or read is exit 2 with what to do.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { z } from "zod";
import { parseConfig } from "../../src/config/index.ts";
import { CompiledContractRegistry } from "../../src/contracts/index.ts";
import { runWrit as run } from "../support/command.ts";
import { startTestGateway } from "../support/gateway.ts";
import { connectMcp } from "../support/mcp-client.ts";
import { type ConformanceHttpServer, startConformanceHttpServer } from "../support/mcp-conformance-server.ts";
import { repoRoot } from "../support/paths.ts";

const MEMORY = path.join(repoRoot, "node_modules/@modelcontextprotocol/server-memory/dist/index.js");
const STDIO = `node ${MEMORY}`;

const documentSchema = z.object({
  mcp: z.object({ servers: z.array(z.record(z.string(), z.unknown())) }),
  tools: z.array(z.record(z.string(), z.unknown())),
});

let tmp: string;
let serverTools: Tool[];
let yaml: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "writ-contracts-import-"));
  // The server's own list, read with the SDK's client directly: what the contracts must equal.
  const client = new Client({ name: "contracts-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [MEMORY],
      env: { MEMORY_FILE_PATH: path.join(tmp, "direct.jsonl") },
      stderr: "pipe",
    }),
  );
  serverTools = (await client.listTools()).tools;
  await client.close();
  const answer = await run([
    "contracts",
    "import",
    "--stdio",
    `MEMORY_FILE_PATH=${path.join(tmp, "import.jsonl")} ${STDIO}`,
  ]);
  expect(answer.err).toBe("");
  expect(answer.code).toBe(0);
  yaml = answer.out;
}, 60_000);

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("writ contracts import --stdio (server-memory)", () => {
  it("gives a contract for every tool with the server's schemas, read-only tools side_effect none", () => {
    const config = parseConfig(parseYaml(yaml), tmp, "imported");
    expect(serverTools.length).toBeGreaterThan(5);
    for (const tool of serverTools) {
      const contract = config.tools.find((c) => c.backend.kind === "mcp" && c.backend.tool === tool.name);
      expect(contract, tool.name).toBeDefined();
      expect(contract?.name).toBe(`memory.${tool.name}`);
      expect(contract?.backend).toEqual({ kind: "mcp", server: "memory", tool: tool.name });
      expect(contract?.input_schema).toEqual(tool.inputSchema);
      expect(contract?.output_schema).toEqual(tool.outputSchema);
      expect(contract?.description).toBe(tool.description);
      expect(contract?.model_views).toEqual([{ family: "default", name: tool.name }]);
      const readOnly = tool.annotations?.readOnlyHint === true;
      expect(contract?.side_effect, tool.name).toBe(readOnly ? "none" : "committing");
      expect(contract?.idempotency, tool.name).toBe(
        readOnly || tool.annotations?.idempotentHint ? "natural" : "none",
      );
    }
    expect(config.tools.map((c) => c.name)).toContain("memory.read_graph");
    // Its one resource, which only reads by the protocol.
    expect(config.tools.find((c) => c.backend.kind === "mcp_resource")?.backend).toEqual({
      kind: "mcp_resource",
      server: "memory",
      uri: "memory://knowledge-graph",
    });
    // The server entry the backends name; the environment given is not written.
    expect(config.mcp.servers).toMatchObject([
      { name: "memory", transport: "stdio", command: "node", args: [MEMORY], env: {} },
    ]);
    expect(yaml).toContain("MEMORY_FILE_PATH) is not written");
    expect(() => new CompiledContractRegistry(config.tools, { pointer: "/tools" })).not.toThrow();
  });

  it("marks every field taken from a hint as the server's claim, and says so at the top", () => {
    const block = yaml.slice(
      yaml.indexOf("# Read Graph (the server's title)"),
      yaml.indexOf("- name: memory.search_nodes"),
    );
    expect(block).toContain(
      "# from the server's readOnlyHint: a claim, not a fact; review before trusting it\n    side_effect: none",
    );
    expect(block).toContain("openWorldHint: false");
    const destructive = yaml.slice(
      yaml.indexOf("- name: memory.delete_entities"),
      yaml.indexOf("- name: memory.delete_observations"),
    );
    expect(destructive).toContain("from the server's destructiveHint (true)");
    expect(destructive).toContain("from the server's idempotentHint: a claim, not a fact");
    expect(yaml).toMatch(/^# Contracts imported by writ contracts import from the MCP server "memory"/m);
    expect(yaml).toContain("A policy\n# must never trust them");
  });

  it("serves what it printed: the contracts and server entry as a configuration, calls through /mcp", async () => {
    const imported = documentSchema.parse(parseYaml(yaml));
    const [entry] = imported.mcp.servers;
    const policyDir = path.join(tmp, "policy", "writ");
    await import("node:fs/promises").then(({ mkdir }) => mkdir(policyDir, { recursive: true }));
    await writeFile(
      path.join(policyDir, "decision.rego"),
      `package writ

import rego.v1

default decision := {"decision": "deny", "reasons": [{"code": "no_rule_allows", "message": "no rule allows this", "visible_to_model": true}]}

decision := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}} if {
	input.action.name in {"memory.create_entities", "memory.read_graph"}
	"viewer" in input.subject.roles
}
`,
    );
    const gw = await startTestGateway({
      configure: (document) => ({
        ...document,
        tools: imported.tools,
        limits: [],
        history: [],
        mcp: { servers: [{ ...entry, env: { MEMORY_FILE_PATH: path.join(tmp, "served.jsonl") } }] },
        policy: {
          ...z.record(z.string(), z.unknown()).parse(document.policy),
          dir: path.join(tmp, "policy"),
        },
      }),
    });
    try {
      const client = await connectMcp(gw.url, await gw.token("vic", { roles: ["viewer"] }));
      const listed = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(listed).toEqual(["create_entities", "read_graph"]);
      const entity = { name: "Writ", entityType: "gateway", observations: ["decides every call"] };
      const created = CallToolResultSchema.parse(
        await client.callTool({ name: "create_entities", arguments: { entities: [entity] } }),
      );
      expect(created.isError).toBeFalsy();
      const graph = CallToolResultSchema.parse(await client.callTool({ name: "read_graph", arguments: {} }));
      expect(graph.isError).toBeFalsy();
      // Checked against the imported draft-07 output schema on the way back.
      expect(graph.structuredContent).toMatchObject({ entities: [entity] });
      const refused = CallToolResultSchema.parse(
        await client.callTool({ name: "delete_entities", arguments: { entityNames: ["Writ"] } }),
      );
      expect(refused.isError).toBe(true);
      await client.close();
    } finally {
      await gw.close();
    }
  }, 60_000);

  it("writes <dir>/<server>.yaml with --out, and names the server with --name", async () => {
    const out = path.join(tmp, "contracts");
    const answer = await run(["contracts", "import", "--stdio", STDIO, "--name", "kg", "--out", out]);
    expect(answer.code).toBe(0);
    expect(answer.out).toMatch(
      /^wrote 10 contracts \(9 tools, 1 resources, 0 prompts\) of the MCP server "kg" \(memory-server /,
    );
    const written = documentSchema.parse(parseYaml(await readFile(path.join(out, "kg.yaml"), "utf8")));
    expect(written.tools.map((t) => t.name)).toContain("kg.read_graph");
  }, 60_000);
});

describe("writ contracts import --check", () => {
  let file: string;
  let contracts: Record<string, unknown>[];

  beforeAll(async () => {
    file = path.join(tmp, "check.yaml");
    await writeFile(file, yaml);
    contracts = documentSchema.parse(parseYaml(yaml)).tools;
  });

  async function checkWith(
    tools: Record<string, unknown>[],
  ): Promise<{ code: number; out: string; err: string }> {
    const changed = path.join(tmp, "changed.yaml");
    await writeFile(changed, stringifyYaml({ tools, mcp: { servers: [] } }));
    return run(["contracts", "import", "--stdio", STDIO, "--check", changed]);
  }

  it("exits 0 when the contracts match the server's lists", async () => {
    const answer = await run(["contracts", "import", "--stdio", STDIO, "--check", file]);
    expect(answer.err).toBe("");
    expect(answer.out).toMatch(/^no drift: the 10 contracts in .* match the MCP server "memory"/);
    expect(answer.code).toBe(0);
  }, 30_000);

  it("catches a removed tool: a contract whose tool the server no longer lists", async () => {
    const gone = {
      ...contracts[0],
      name: "memory.forget_everything",
      backend: { kind: "mcp", server: "memory", tool: "forget_everything" },
      model_views: [],
    };
    const answer = await checkWith([...contracts, gone]);
    expect(answer.code).toBe(1);
    expect(answer.out).toContain(
      'removed  tool "forget_everything" (contract memory.forget_everything): the server no longer lists it',
    );
    expect(answer.out).toMatch(/1 differences: 0 added, 1 removed, 0 changed$/);
  }, 30_000);

  it("reports added tools, and schema changes with their JSON Pointers", async () => {
    const edited = contracts
      .filter((c) => c.name !== "memory.open_nodes")
      .map((c) => {
        if (c.name !== "memory.create_entities") return c;
        const items = z.looseObject({ required: z.array(z.string()) });
        const schema = z
          .looseObject({ properties: z.looseObject({ entities: z.looseObject({ items }) }) })
          .parse(c.input_schema);
        schema.properties.entities.items.required = ["name", "entityType"];
        return { ...c, input_schema: schema, output_schema: undefined };
      });
    const answer = await checkWith(edited);
    expect(answer.code).toBe(1);
    expect(answer.out).toContain(
      'added    tool "open_nodes": the server lists it and no contract governs it',
    );
    expect(answer.out).toContain('changed  tool "create_entities" (contract memory.create_entities):');
    expect(answer.out).toContain("input_schema /properties/entities/items/required/2: added by the server");
    expect(answer.out).toContain("output_schema: added by the server");
  }, 30_000);

  it("reports a contract that says side_effect none for a tool its server does not claim is read-only", async () => {
    const edited = contracts.map((c) =>
      c.name === "memory.delete_entities" ? { ...c, side_effect: "none" } : c,
    );
    const answer = await checkWith(edited);
    expect(answer.code).toBe(1);
    expect(answer.out).toContain(
      "side_effect: the contract says none, but the server no longer claims the tool is read-only",
    );
  }, 30_000);

  it("refuses a path with no contract of the server, naming the servers it has", async () => {
    const answer = await run(["contracts", "import", "--stdio", STDIO, "--name", "other", "--check", file]);
    expect(answer.code).toBe(2);
    expect(answer.err).toContain("no contract in");
    expect(answer.err).toContain('what to do: give the name those contracts use with --name ("memory")');
  }, 30_000);
});

describe("writ contracts import: failures are exit 2 with what to do", () => {
  let notMcp: Server;
  let notMcpUrl: string;
  const seenKeys: unknown[] = [];
  let refusedUrl: string;
  let http: ConformanceHttpServer;

  beforeAll(async () => {
    notMcp = createServer((req, res) => {
      seenKeys.push(req.headers["x-api-key"]);
      res.writeHead(404, { "content-type": "text/html" }).end("<h1>nope</h1>");
    });
    await new Promise<void>((resolve) => notMcp.listen(0, "127.0.0.1", resolve));
    notMcpUrl = `http://127.0.0.1:${(notMcp.address() as AddressInfo).port}/`;
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    refusedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/mcp`;
    await new Promise((resolve) => closed.close(resolve));
    http = await startConformanceHttpServer();
  });

  afterAll(async () => {
    await new Promise((resolve) => notMcp.close(resolve));
    await http.close();
  });

  // The arguments are functions: the servers' URLs are known only once beforeAll ran.
  it.each<[string, () => string[], RegExp, RegExp]>([
    [
      "a command that is not there",
      () => ["--stdio", "no-such-mcp-server-here --flag"],
      /"no-such-mcp-server-here" is not a program on the PATH/,
      /what to do: check the command line given to --stdio/,
    ],
    [
      "a command that is not an MCP server",
      () => ["--stdio", `node -e "process.exit(3)"`],
      /did not answer as an MCP server/,
      /what to do: check that the command starts an MCP server/,
    ],
    [
      "a URL that refuses",
      () => ["--url", refusedUrl],
      /cannot reach the MCP server at .*: the connection was refused/,
      /what to do: check the URL/,
    ],
    [
      "a URL that is not MCP",
      () => ["--url", notMcpUrl],
      /did not answer as an MCP server: HTTP 404/,
      /what to do: give the server's Streamable HTTP endpoint/,
    ],
    [
      "a shell pipeline",
      () => ["--stdio", "cat | node server.js"],
      /"\|" is shell syntax/,
      /what to do: give one command/,
    ],
    [
      "both --stdio and --url",
      () => ["--stdio", STDIO, "--url", "http://127.0.0.1:1/mcp"],
      /exactly one of --stdio/,
      /writ contracts import --help/,
    ],
    [
      "a header without a colon",
      () => ["--url", "http://127.0.0.1:1/mcp", "--header", "no colon"],
      /is not "Name: value"/,
      /--help/,
    ],
  ])(
    "%s",
    async (_label, args, message, fix) => {
      const answer = await run(["contracts", "import", ...args()]);
      expect(answer.code).toBe(2);
      expect(answer.err).toMatch(/^writ contracts import: /);
      expect(answer.err).toMatch(message);
      expect(answer.err).toMatch(fix);
      expect(answer.err).not.toMatch(/\n\s+at /);
    },
    30_000,
  );

  it("sends --header to the server", async () => {
    seenKeys.length = 0;
    const answer = await run(["contracts", "import", "--url", notMcpUrl, "--header", "X-Api-Key: s3cret"]);
    expect(answer.code).toBe(2);
    expect(seenKeys).toContain("s3cret");
    expect(answer.err).not.toContain("s3cret");
  }, 30_000);

  it("reads a Streamable HTTP server with --url, writing neither the header nor a secret", async () => {
    const answer = await run([
      "contracts",
      "import",
      "--url",
      http.url,
      "--header",
      "X-Api-Key: s3cret",
      "--name",
      "ref",
    ]);
    expect(answer.err).toBe("");
    expect(answer.code).toBe(0);
    const config = parseConfig(parseYaml(answer.out), tmp, "imported");
    expect(config.mcp.servers).toEqual([
      { name: "ref", transport: "http", url: http.url, protocol_version: "auto" },
    ]);
    expect(config.tools.length).toBeGreaterThan(0);
    expect(config.tools.some((c) => c.backend.kind === "mcp_prompt")).toBe(true);
    expect(answer.out).not.toContain("s3cret");
    expect(answer.out).toContain("the headers given are not written");
    expect(() => new CompiledContractRegistry(config.tools)).not.toThrow();
  }, 30_000);

  it("answers --help with exit 0, naming the exit statuses", async () => {
    const answer = await run(["contracts", "import", "--help"]);
    expect(answer.code).toBe(0);
    expect(answer.out).toMatch(/^usage: writ contracts import/);
    expect(answer.out).toContain("exit status: 0");
  });
});
