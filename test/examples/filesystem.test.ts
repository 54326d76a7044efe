/**
 * The README's "Put Writ in front of your MCP server" example, run as the README shows it:
 * `examples/filesystem/writ.yaml` (changed only where a test must: a free port, a temp store and
 * key files, a temp copy of the served folder) starts Writ with the real
 * `@modelcontextprotocol/server-filesystem` from npm as its stdio child, and the SDK's client
 * calls it with tokens from the configuration's development issuer (what `npx writ token` mints).
 * The README's quotes of the configuration and the policy must be the files' own text.
 */
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type CallToolResult, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { parseConfig } from "../../src/config/index.ts";
import { writErrorSchema } from "../../src/core/errors.ts";
import { DevIssuer } from "../../src/identity/index.ts";
import { type RunningGateway, startGateway } from "../../src/server.ts";
import { answerOf, healthSchema, waitFor } from "../support/gateway.ts";
import { connectMcp } from "../support/mcp-client.ts";
import { repoRoot } from "../support/paths.ts";

const EXAMPLE = path.join(repoRoot, "examples/filesystem");
const CONFIG_FILE = path.join(EXAMPLE, "writ.yaml");
const SECTION = "## Put Writ in front of your MCP server";

const record = z.record(z.string(), z.unknown());
const stdioServer = z.looseObject({
  transport: z.literal("stdio"),
  command: z.string(),
  args: z.array(z.string()),
});
const refusalSchema = z.looseObject({
  error: writErrorSchema,
  decision: z.string().optional(),
  reasons: z.array(z.object({ code: z.string() }).passthrough()).optional(),
  approval: z.object({ id: z.string() }).passthrough().optional(),
});
const resultMetaSchema = z.looseObject({
  decision_id: z.string(),
  provenance: z.looseObject({ tool: z.string(), target: z.string() }),
});

let tmp: string;
let served: string;
let writ: RunningGateway;
let issuer: DevIssuer;
/** The filesystem server as the configuration starts it, called directly (not through Writ). */
let direct: Client;
const clients: Client[] = [];

function section(document: Record<string, unknown>, name: string): Record<string, unknown> {
  return record.parse(document[name] ?? {});
}

async function connect(sub: string, roles: string[]): Promise<Client> {
  const token = await issuer.mint({ sub, tenant: "demo", roles, ttlSeconds: 600 });
  const client = await connectMcp(writ.url, token, "writ-filesystem-example");
  clients.push(client);
  return client;
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  meta?: Record<string, unknown>,
): Promise<CallToolResult> {
  return CallToolResultSchema.parse(
    await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }),
  );
}

function refusal(result: CallToolResult) {
  expect(result.isError).toBe(true);
  return refusalSchema.parse(result.structuredContent);
}

/** How many calls Writ has sent to MCP servers (its Prometheus counter, by outcome). */
async function mcpDispatches(): Promise<number> {
  const text = await (await fetch(`${writ.url}/metrics`)).text();
  return [...text.matchAll(/^writ_dispatches_total\{[^}]*backend="mcp"[^}]*\} (\d+)$/gm)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  );
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "writ-example-fs-"));
  served = path.join(tmp, "files");
  await cp(path.join(EXAMPLE, "files"), served, { recursive: true });

  const document = record.parse(parseYaml(await readFile(CONFIG_FILE, "utf8")));
  const identity = section(document, "identity");
  const mcp = section(document, "mcp");
  const [server, ...others] = z.array(stdioServer).parse(mcp.servers);
  // The served folder is the server's last argument; the test serves a copy of it.
  expect(server?.args.at(-1)).toBe("files");
  expect(others).toEqual([]);
  if (server === undefined) throw new Error("writ.yaml names no MCP server");
  const child = { ...server, args: [...server.args.slice(0, -1), served] };
  const config = parseConfig(
    {
      ...document,
      server: { ...section(document, "server"), port: 0 },
      store: { sqlite: path.join(tmp, "writ.db") },
      identity: {
        ...identity,
        dev_issuer: { ...section(identity, "dev_issuer"), key_file: path.join(tmp, "dev-issuer.json") },
      },
      grants: { ...section(document, "grants"), key_file: path.join(tmp, "grant-keys.json") },
      mcp: { ...mcp, servers: [child] },
    },
    EXAMPLE,
    CONFIG_FILE,
  );
  writ = await startGateway(config);
  const dev = config.identity.dev_issuer;
  expect(dev.enabled).toBe(true);
  issuer = await DevIssuer.create({ keyFile: dev.key_file, issuer: dev.issuer, audience: dev.audience });

  direct = new Client({ name: "writ-filesystem-example-direct", version: "1.0.0" });
  await direct.connect(
    new StdioClientTransport({
      command: child.command,
      args: child.args,
      cwd: EXAMPLE,
      env: getDefaultEnvironment(),
      stderr: "ignore",
    }),
  );
  await waitFor(
    "the filesystem server to connect",
    async () => {
      const health = healthSchema.parse((await answerOf(await fetch(`${writ.url}/healthz`))).json);
      return health.mcp_servers?.every((s) => s.connected) || undefined;
    },
    15_000,
  );
}, 60_000);

afterAll(async () => {
  for (const client of clients) await client.close();
  await direct?.close();
  await writ?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe("Writ in front of @modelcontextprotocol/server-filesystem (README example)", () => {
  it("lists only the contracted tools the caller's role may use", async () => {
    const upstream = (await direct.listTools()).tools.map((t) => t.name);
    expect(upstream).toEqual(expect.arrayContaining(["edit_file", "move_file", "read_text_file"]));

    const viewer = await connect("vic", ["viewer"]);
    const editor = await connect("eda", ["editor"]);
    const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();
    expect(await names(viewer)).toEqual(["list_directory", "read_text_file", "search_files"]);
    expect(await names(editor)).toEqual(["list_directory", "read_text_file", "search_files", "write_file"]);
  });

  it("passes a file read through as the server's own text item, with Writ's provenance beside it", async () => {
    const viewer = await connect("vic", ["viewer"]);
    const through = await call(viewer, "read_text_file", { path: "notes.md" });
    const straight = CallToolResultSchema.parse(
      await direct.callTool({ name: "read_text_file", arguments: { path: "notes.md" } }),
    );
    const text = await readFile(path.join(served, "notes.md"), "utf8");
    expect(through.isError).toBeFalsy();
    expect(through.content).toEqual([{ type: "text", text }]);
    expect(through.content).toEqual(straight.content);
    expect(through.structuredContent).toEqual(straight.structuredContent);
    const meta = resultMetaSchema.parse(through._meta?.["writ/result"]);
    expect(meta.provenance).toMatchObject({ tool: "fs.read_text_file", target: "mcp:files" });

    const listing = await call(viewer, "list_directory", { path: "." });
    expect(listing.content).toEqual([{ type: "text", text: expect.stringContaining("[FILE] notes.md") }]);
  });

  it("refuses .env by policy without calling the server, which would have answered", async () => {
    const viewer = await connect("vic", ["viewer"]);
    const before = await mcpDispatches();
    for (const file of [".env", "../files/.env", path.join(served, ".env")]) {
      const denied = refusal(await call(viewer, "read_text_file", { path: file }));
      expect(denied.error.category).toBe("policy_denied");
      expect(denied.reasons?.map((r) => r.code)).toEqual(["hidden_path"]);
      expect(JSON.stringify(denied)).not.toContain("not-a-real-key");
    }
    expect(await mcpDispatches()).toBe(before);

    const straight = CallToolResultSchema.parse(
      await direct.callTool({ name: "read_text_file", arguments: { path: ".env" } }),
    );
    expect(straight.isError).toBeFalsy();
    expect(JSON.stringify(straight.content)).toContain("EXAMPLE_API_KEY=not-a-real-key");
  });

  it("writes a file only for an editor, once a maintainer approves", async () => {
    const args = { path: "changelog.md", content: "# 0.4\n\n- offline export\n" };
    const target = path.join(served, "changelog.md");
    const viewer = await connect("vic", ["viewer"]);
    expect(refusal(await call(viewer, "write_file", args)).reasons?.map((r) => r.code)).toEqual([
      "editors_only",
    ]);

    const editor = await connect("eda", ["editor"]);
    const pending = refusal(await call(editor, "write_file", args));
    expect(pending.error.category).toBe("approval_required");
    const approval = pending.approval?.id;
    if (approval === undefined) throw new Error("no approval id in the approval_required answer");
    await expect(readFile(target, "utf8")).rejects.toThrow(/ENOENT/);

    // The editor cannot approve their own write, even holding the maintainer role too.
    const approve = async (sub: string, roles: string[]) => {
      const token = await issuer.mint({ sub, tenant: "demo", roles, ttlSeconds: 600 });
      const response = await fetch(`${writ.url}/v1/approvals/${approval}/approve`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ reason: "release notes are fine" }),
      });
      return response.status;
    };
    expect(await approve("eda", ["editor", "maintainer"])).not.toBe(200);
    expect(await approve("mia", ["maintainer"])).toBe(200);

    const done = await call(editor, "write_file", args, { "writ/approval": approval });
    expect(done.isError).toBeFalsy();
    expect(done.content).toEqual([{ type: "text", text: "Successfully wrote to changelog.md" }]);
    expect(await readFile(target, "utf8")).toBe(args.content);
  });
});

describe("the README section", () => {
  it("runs this configuration, and quotes the configuration and the policy as the files hold them", async () => {
    const readme = await readFile(path.join(repoRoot, "README.md"), "utf8");
    const start = readme.indexOf(SECTION);
    expect(start).toBeGreaterThanOrEqual(0);
    const end = readme.indexOf("\n## ", start + SECTION.length);
    const text = readme.slice(start, end === -1 ? undefined : end);
    expect(text).toContain("npx writ serve --config examples/filesystem/writ.yaml");

    const quotes = [...text.matchAll(/<!-- quoted from (\S+) -->\n```\w*\n([\s\S]*?)```/g)];
    const files = quotes.map((q) => q[1]);
    expect(files).toEqual(
      expect.arrayContaining(["examples/filesystem/writ.yaml", "examples/filesystem/policy/filesystem.rego"]),
    );
    for (const [, file = "", quoted = ""] of quotes) {
      const source = await readFile(path.join(repoRoot, file), "utf8");
      expect(source, `README quotes ${file}`).toContain(quoted);
    }
  });
});
