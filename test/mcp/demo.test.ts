/**
 * The default configuration serves its in-process demo tools over /mcp too: an MCP client reads
 * a file of the demo workspace through Writ, and the policy's refusals arrive as tool errors.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
let alice: Client;

beforeAll(async () => {
  gw = await startTestGateway();
  alice = new Client({ name: "writ-test", version: "1.0.0" });
  await alice.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${await gw.token("alice")}` } },
    }),
  );
}, 60_000);

afterAll(async () => {
  await alice?.close();
  await gw?.close();
});

describe("the default configuration over MCP", () => {
  it("lists the demo tools and runs repo.read in process", async () => {
    const tools = (await alice.listTools()).tools;
    expect(tools.map((t) => t.name)).toContain("repo_read");
    const result = CallToolResultSchema.parse(
      await alice.callTool({ name: "repo_read", arguments: { workspace: "ws-demo", path: "README.md" } }),
    );
    expect(result.isError).toBeFalsy();
    const content = z
      .object({ content: z.string(), hash: z.string() })
      .passthrough()
      .parse(result.structuredContent);
    expect(content.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("answers a policy refusal as a tool error", async () => {
    const result = CallToolResultSchema.parse(
      await alice.callTool({ name: "repo_read", arguments: { workspace: "ws-demo", path: ".env" } }),
    );
    expect(result.isError).toBe(true);
    const body = z.object({ error: writErrorSchema }).passthrough().parse(result.structuredContent);
    expect(body.error.category).toBe("policy_denied");
    expect(result.content[0]?.type).toBe("text");
  });

  it("logs a tool call refused for its token, as the HTTP API does", async () => {
    const answer = await gw.request("POST", "/mcp", {
      token: "not-a-jwt",
      headers: { accept: "application/json, text/event-stream" },
      body: {
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "repo_read", arguments: { workspace: "ws-demo", path: "README.md" } },
      },
    });
    expect(answer.status).toBe(401);
    const page = await gw.gateway.log.query({ action: "repo.read", decision: "error" }, 10);
    expect(page.entries.map((e) => [e.error, e.subject])).toContainEqual(["unauthenticated", null]);
  });

  it("answers GET with 405: the endpoint is stateless", async () => {
    const answer = await gw.request("GET", "/mcp", { token: await gw.token("alice") });
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toBe("POST");
  });
});
