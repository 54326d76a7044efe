/**
 * Code Mode on Writ's /mcp through the official MCP client: `run_code` is listed (with the
 * caller's SDK) only for callers the policy lets run code, and a call answers the run's outcome.
 */
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { connectMcp } from "../support/mcp-client.ts";

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});

afterAll(async () => {
  await gw?.close();
});

const PROGRAM = `
const [readme, sum] = await Promise.all([
  tools.repo_read({ workspace: "ws-demo", path: "README.md" }),
  tools.repo_read({ workspace: "ws-demo", path: "src/sum.ts" }),
]);
console.log("two reads");
return [readme.path, sum.path];`;

describe("MCP run_code", () => {
  it("is listed with the caller's SDK for a developer, and not for others", async () => {
    const developer = await connectMcp(gw.url, await gw.token("alice"));
    const auditor = await connectMcp(gw.url, await gw.token("olga", { roles: ["auditor"] }));
    try {
      const { tools } = await developer.listTools();
      const runCode = tools.find((t) => t.name === "run_code");
      expect(runCode?.inputSchema).toMatchObject({ required: ["code"] });
      for (const tool of tools.filter((t) => t.name !== "run_code")) {
        expect(runCode?.description).toContain(`${tool.name}(args: {`);
      }
      expect((await auditor.listTools()).tools.map((t) => t.name)).not.toContain("run_code");
    } finally {
      await developer.close();
      await auditor.close();
    }
  });

  it("runs a program and answers its outcome; a refused run is a tool error", async () => {
    const developer = await connectMcp(gw.url, await gw.token("alice"));
    try {
      const result = CallToolResultSchema.parse(
        await developer.callTool({ name: "run_code", arguments: { code: PROGRAM } }),
      );
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({
        outcome: "returned",
        value: ["README.md", "src/sum.ts"],
        logs: ["two reads"],
        ledger: [
          { index: 0, tool: "repo_read", decision: "allow" },
          { index: 1, tool: "repo_read", decision: "allow" },
        ],
      });
      expect(result.content).toEqual([{ type: "text", text: '["README.md","src/sum.ts"]' }]);

      // Through the SDK's server (a progress token takes the call off the fast path).
      const denied = CallToolResultSchema.parse(
        await developer.callTool(
          {
            name: "run_code",
            arguments: { code: `return await tools.repo_read({ workspace: "ws-demo", path: ".env" });` },
          },
          undefined,
          { onprogress: () => undefined },
        ),
      );
      expect(denied.isError).toBe(true);
      expect(denied.structuredContent).toMatchObject({
        outcome: "stopped",
        failed_call: { index: 0, tool: "repo_read" },
        error: { category: "policy_denied", effect_committed: false },
      });

      const malformed = CallToolResultSchema.parse(
        await developer.callTool({ name: "run_code", arguments: { program: "return 1" } }),
      );
      expect(malformed.isError).toBe(true);
      expect(malformed.structuredContent).toMatchObject({ error: { category: "invalid_argument" } });
    } finally {
      await developer.close();
    }
  });
});
