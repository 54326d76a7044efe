/**
 * `Mcp-Param-*` headers on 2026-07-28 (MCP's Streamable HTTP transport): the demo's `repo.read`
 * declares `x-mcp-header: Workspace` on its `workspace` argument. `tools/list` shows the
 * declaration, a real v2 client mirrors the argument into `Mcp-Param-Workspace` by itself, and a
 * raw call whose header is missing or disagrees with the body is refused 400 / -32020 with Writ's
 * error in `error.data`, logged, before anything is decided. The body decides; 2025-11-25 has no
 * such headers.
 */
import type { Client } from "@modelcontextprotocol/client";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { WS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { connectMcp, postMcp } from "../support/mcp-client.ts";
import { connectModernMcp, postModern } from "../support/mcp-v2-client.ts";

const README = { workspace: WS, path: "README.md" };
const recordSchema = z.record(z.string(), z.unknown());
const jsonRpcErrorSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number(), z.null()]),
  error: z.object({ code: z.number(), message: z.string(), data: recordSchema }),
});
const resultSchema = z.object({ jsonrpc: z.literal("2.0"), result: CallToolResultSchema });

/**
 * The default tools with `repo.read`'s `workspace` mirrored into `Mcp-Param-Workspace`, and
 * `repo.search` given an integer `page` and a boolean `exact` (which its handler ignores)
 * mirrored into `Mcp-Param-Page` and `Mcp-Param-Exact`.
 */
function withParamHeaders(document: Record<string, unknown>): Record<string, unknown> {
  const tools = z.array(recordSchema).parse(document.tools);
  const added: Record<string, Record<string, unknown>> = {
    "repo.read": { workspace: { type: "string", minLength: 1, "x-mcp-header": "Workspace" } },
    "repo.hidden_read": { workspace: { type: "string", minLength: 1, "x-mcp-header": "Workspace" } },
    "repo.search": {
      page: { type: "integer", "x-mcp-header": "Page" },
      exact: { type: "boolean", "x-mcp-header": "Exact" },
    },
  };
  // A tool the sample policy does not govern: denied, so hidden from every caller's list.
  const read = tools.find((tool) => tool.name === "repo.read");
  // Its model-facing name is the default (repo_hidden_read): repo.read's views name repo_read.
  const hidden: Record<string, unknown> = { ...read, name: "repo.hidden_read", model_views: undefined };
  return {
    ...document,
    tools: [...tools, hidden].map((tool) => {
      const properties = typeof tool.name === "string" ? added[tool.name] : undefined;
      if (properties === undefined) return tool;
      const schema = recordSchema.parse(tool.input_schema);
      return {
        ...tool,
        input_schema: { ...schema, properties: { ...recordSchema.parse(schema.properties), ...properties } },
      };
    }),
  };
}

let gw: TestGateway;
let alice: string;
let modern: Client;
/** The `Mcp-Param-Workspace` header of each `tools/call` the v2 client sent. */
const mirrored: Array<string | null> = [];

beforeAll(async () => {
  gw = await startTestGateway({ configure: withParamHeaders });
  alice = await gw.token("alice");
  modern = await connectModernMcp(gw.url, alice, "writ-param-headers-test", (input, init) => {
    const headers = new Headers(init?.headers);
    if (headers.get("mcp-method") === "tools/call") mirrored.push(headers.get("mcp-param-workspace"));
    return fetch(input, init);
  });
}, 60_000);

afterAll(async () => {
  await modern?.close();
  await gw?.close();
});

function readCall(headers: Record<string, string>, args: Record<string, unknown> = README, id = 1) {
  return postModern(
    gw.url,
    alice,
    { id, method: "tools/call", params: { name: "repo_read", arguments: args } },
    headers,
  );
}

/** A raw request's JSON-RPC error, with Writ's error in its data. */
async function rawError(response: Response) {
  const text = await response.text();
  expect(response.status, text).toBe(400);
  const message = jsonRpcErrorSchema.parse(JSON.parse(text));
  return { ...message.error, writ: writErrorSchema.parse(message.error.data) };
}

/** The entries the decision log holds for repo.read, by decision. */
async function readEntries(): Promise<string[]> {
  return (await gw.gateway.log.query({ action: "repo.read" }, 1000)).entries.map((entry) => entry.decision);
}

describe("tools/list", () => {
  it("shows the declaration on the tool's MCP view", async () => {
    const { tools } = await modern.listTools();
    const read = tools.find((tool) => tool.name === "repo_read");
    expect(read?.inputSchema.properties?.workspace).toMatchObject({
      type: "string",
      "x-mcp-header": "Workspace",
    });
  });
});

describe("a v2 client", () => {
  it("mirrors the argument into Mcp-Param-Workspace by itself, and the call runs", async () => {
    await modern.listTools();
    const result = await modern.callTool({ name: "repo_read", arguments: README });
    expect(result.isError).toBeFalsy();
    expect(mirrored.at(-1)).toBe(WS);
  });
});

describe("raw requests", () => {
  it("do not describe a tool the caller may not see: its call without the header is refused as any hidden tool's", async () => {
    const response = await postModern(
      gw.url,
      alice,
      { id: 9, method: "tools/call", params: { name: "repo_hidden_read", arguments: README } },
      {},
    );
    const text = await response.text();
    expect(response.status, text).not.toBe(400);
    expect(text).not.toContain("Mcp-Param");
    expect(text).not.toContain("-32020");
  });

  it("run with a header that agrees, plain or Base64 (=?base64?…?=), its name in any case", async () => {
    for (const header of [WS, `=?base64?${Buffer.from(WS).toString("base64")}?=`]) {
      const response = await readCall({ "MCP-PARAM-WORKSPACE": header });
      expect(response.status).toBe(200);
      expect(resultSchema.parse(await response.json()).result.isError).toBeFalsy();
    }
  });

  it("refuse a missing header when the body carries the argument: 400, -32020, Writ's error, logged, nothing decided", async () => {
    const before = await readEntries();
    const refused = await rawError(await readCall({}, README, 7));
    expect(refused.code).toBe(-32020);
    expect(refused.writ.category).toBe("invalid_argument");
    expect(refused.writ.suggested_fix).toContain("Mcp-Param-*");
    expect(refused.data.mismatch).toMatchObject({ header: "Mcp-Param-Workspace" });
    expect(refused.message).toContain("absent");
    const after = await readEntries();
    // One entry more, the refusal (an error), and no decision of the policy.
    expect(after).toHaveLength(before.length + 1);
    expect(after.filter((decision) => decision !== "error")).toHaveLength(
      before.filter((decision) => decision !== "error").length,
    );
  });

  it("refuse a header that disagrees with the body (the body is what would be decided)", async () => {
    const refused = await rawError(await readCall({ "mcp-param-workspace": "someone-elses" }));
    expect(refused.code).toBe(-32020);
    expect(refused.message).toContain("someone-elses");
    expect(refused.writ.category).toBe("invalid_argument");
  });

  it("refuse a Base64 sentinel that is not canonical Base64 or not UTF-8", async () => {
    for (const header of [
      "=?base64?not base64!?=",
      `=?base64?${Buffer.from([0xff, 0xfe]).toString("base64")}?=`,
    ]) {
      const refused = await rawError(await readCall({ "mcp-param-workspace": header }));
      expect(refused.code).toBe(-32020);
    }
  });

  it("expect no header when the body has no such argument (the call is then judged on its body)", async () => {
    const response = await readCall({ "mcp-param-workspace": WS }, { path: "README.md" });
    expect(response.status).toBe(200);
    const result = resultSchema.parse(await response.json()).result;
    expect(result.isError).toBe(true);
    expect(writErrorSchema.parse(recordSchema.parse(result.structuredContent).error).category).toBe(
      "invalid_argument",
    );
  });

  it("compare an integer as a number and a boolean as true/false", async () => {
    const search = (args: Record<string, unknown>, headers: Record<string, string>) =>
      postModern(
        gw.url,
        alice,
        {
          method: "tools/call",
          params: { name: "repo_search", arguments: { workspace: WS, query: "x", ...args } },
        },
        headers,
      );
    for (const page of ["2", "2.0", "02"]) {
      const response = await search(
        { page: 2, exact: true },
        { "mcp-param-page": page, "mcp-param-exact": "true" },
      );
      expect(response.status, page).toBe(200);
      expect(resultSchema.parse(await response.json()).result.isError).toBeFalsy();
    }
    expect((await rawError(await search({ page: 2 }, { "mcp-param-page": "3" }))).code).toBe(-32020);
    expect((await rawError(await search({ exact: false }, { "mcp-param-exact": "False" }))).code).toBe(
      -32020,
    );
    // Arguments the call leaves out expect no header.
    const without = await search({}, {});
    expect(without.status).toBe(200);
    expect(resultSchema.parse(await without.json()).result.isError).toBeFalsy();
  });

  it("leave tools without declarations alone", async () => {
    const response = await postModern(gw.url, alice, {
      method: "tools/call",
      params: { name: "repo_propose_edit", arguments: { workspace: WS, path: "README.md" } },
    });
    expect(response.status).toBe(200);
  });
});

describe("2025-11-25", () => {
  it("has no Mcp-Param-* headers: a v1 client's call runs without them", async () => {
    const legacy = await connectMcp(gw.url, alice);
    try {
      const result = await legacy.callTool({ name: "repo_read", arguments: README });
      expect(result.isError).toBeFalsy();
    } finally {
      await legacy.close();
    }
    const raw = await postMcp(gw.url, alice, {
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: "repo_read", arguments: README },
    });
    expect(raw.status).toBe(200);
  });
});
