import { describe, expect, it } from "vitest";
import { parseProposal } from "../../src/intake/index.ts";
import { mcpToolsCall } from "./fixtures.ts";
import { errorOf } from "./helpers.ts";

describe("mcp", () => {
  it("reads a tools/call request; the call id is the request id as a string", () => {
    expect(parseProposal("mcp", mcpToolsCall())).toEqual({
      format: "mcp",
      calls: [
        {
          callId: "2",
          tool: "get_weather",
          arguments: { location: "New York" },
          source: "mcp",
          pointer: "/params",
        },
      ],
    });
  });

  it("accepts _meta and task, and missing arguments as an empty object", () => {
    const request = {
      jsonrpc: "2.0",
      id: "req-7",
      method: "tools/call",
      params: { name: "list_repos", _meta: { progressToken: "p1" }, task: { ttl: 60000 } },
    };
    expect(parseProposal("mcp", request).calls).toEqual([
      { callId: "req-7", tool: "list_repos", arguments: {}, source: "mcp", pointer: "/params" },
    ]);
  });

  it("refuses other methods, other JSON-RPC versions, unknown params and non-object arguments", () => {
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list", params: { name: "x" } };
    expect(errorOf(() => parseProposal("mcp", list)).field_errors[0]?.path).toBe("/method");

    const old = { ...mcpToolsCall(), jsonrpc: "1.0" };
    expect(errorOf(() => parseProposal("mcp", old)).field_errors).toEqual([
      { path: "/jsonrpc", message: 'must be "2.0", got "1.0"' },
    ]);

    const extra = { ...mcpToolsCall(), params: { name: "get_weather", arguments: {}, cursor: "x" } };
    expect(errorOf(() => parseProposal("mcp", extra)).field_errors).toEqual([
      { path: "/params/cursor", message: 'unknown field "cursor"' },
    ]);

    const array = { ...mcpToolsCall(), params: { name: "get_weather", arguments: ["New York"] } };
    expect(errorOf(() => parseProposal("mcp", array)).field_errors).toEqual([
      { path: "/params/arguments", message: "arguments must be a JSON object, got an array" },
    ]);
  });
});
