/**
 * `grantRequired` inside an MCP server built with the official SDK, called by the SDK's client
 * (in-memory transport): the handler runs only for a grant that matches the call, once; on the
 * v1 SDK's McpServer and on the v2 packages' alike.
 */
import { Client as V2Client, InMemoryTransport as V2InMemoryTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { McpServer as V2McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { grantRequired, MCP_GRANT_META_KEY } from "../../src/executor/index.ts";
import { type GrantRequest, GrantSigner } from "../../src/grants/index.ts";
import { grantRequest } from "../grants/fixtures.ts";

const refusalSchema = z.object({ error: writErrorSchema, code: z.string() });

let signer: GrantSigner;
let client: Client;
let server: McpServer;
const ran: string[] = [];

function grantFor(args: Record<string, unknown>, overrides: Partial<GrantRequest> = {}) {
  return signer.issue(
    grantRequest(args, {
      aud: "mcp:notes",
      act: { name: "notes.read", version: "1" },
      res: { type: "note", id: String(args.id) },
      ...overrides,
    }),
  );
}

beforeAll(async () => {
  signer = await GrantSigner.create({ issuer: "writ" });
  server = new McpServer({ name: "notes", version: "1.0.0" });
  server.registerTool(
    "read_note",
    { inputSchema: { id: z.string() } },
    grantRequired(
      {
        issuer: "writ",
        audience: "mcp:notes",
        keys: signer.jwks(),
        action: { name: "notes.read" },
        resource: (args: { id: string }) => ({ type: "note", id: args.id }),
      },
      async (args: { id: string }, _extra, grant) => {
        ran.push(`${args.id}:${grant.jti}`);
        return { content: [{ type: "text", text: `note ${args.id}` }] };
      },
    ),
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: "writ", version: "1.0.0" });
  await client.connect(clientSide);
});

afterAll(async () => {
  await client?.close();
  await server?.close();
});

async function read(args: Record<string, unknown>, grant?: string) {
  return CallToolResultSchema.parse(
    await client.callTool({
      name: "read_note",
      arguments: args,
      ...(grant === undefined ? {} : { _meta: { [MCP_GRANT_META_KEY]: grant } }),
    }),
  );
}

async function refusal(args: Record<string, unknown>, grant?: string) {
  const before = ran.length;
  const result = await read(args, grant);
  expect(result.isError).toBe(true);
  expect(ran.length).toBe(before);
  return refusalSchema.parse(result.structuredContent);
}

describe("grantRequired", () => {
  it("runs the handler once for a matching grant and refuses its replay", async () => {
    const { token, claims } = await grantFor({ id: "n1" });
    const result = await read({ id: "n1" }, token);
    expect(result.isError).toBeFalsy();
    expect(ran).toContain(`n1:${claims.jti}`);
    const replayed = await refusal({ id: "n1" }, token);
    expect(replayed.code).toBe("replayed");
    expect(replayed.error.category).toBe("policy_denied");
  });

  it("refuses a call without a grant, with other arguments, or for another action or audience", async () => {
    expect((await refusal({ id: "n1" })).code).toBe("missing_grant");
    const { token } = await grantFor({ id: "n1" });
    expect((await refusal({ id: "n2" }, token)).code).toMatch(/args_mismatch|resource_mismatch/);
    const other = await grantFor({ id: "n1" }, { act: { name: "notes.delete", version: "1" } });
    expect((await refusal({ id: "n1" }, other.token)).code).toBe("action_mismatch");
    const elsewhere = await grantFor({ id: "n1" }, { aud: "mcp:files" });
    expect((await refusal({ id: "n1" }, elsewhere.token)).code).toBe("wrong_audience");
  });
});

describe("grantRequired on an McpServer of the SDK's v2 packages", () => {
  it("reads the grant from the handler context's mcpReq._meta", async () => {
    const v2 = new V2McpServer({ name: "notes-v2", version: "2.0.0" });
    v2.registerTool(
      "read_note",
      { inputSchema: z.object({ id: z.string() }) },
      grantRequired(
        {
          issuer: "writ",
          audience: "mcp:notes",
          keys: signer.jwks(),
          action: { name: "notes.read" },
          resource: (args: { id: string }) => ({ type: "note", id: args.id }),
        },
        async (args: { id: string }, _ctx, grant) => {
          ran.push(`v2:${args.id}:${grant.jti}`);
          return { content: [{ type: "text", text: `note ${args.id}` }] };
        },
      ),
    );
    const [clientSide, serverSide] = V2InMemoryTransport.createLinkedPair();
    await v2.connect(serverSide);
    const v2Client = new V2Client({ name: "writ", version: "1.0.0" });
    await v2Client.connect(clientSide);
    try {
      const { token, claims } = await grantFor({ id: "n3" });
      const granted = await v2Client.callTool({
        name: "read_note",
        arguments: { id: "n3" },
        _meta: { [MCP_GRANT_META_KEY]: token },
      });
      expect(granted.isError).toBeFalsy();
      expect(ran).toContain(`v2:n3:${claims.jti}`);
      const missing = await v2Client.callTool({ name: "read_note", arguments: { id: "n3" } });
      expect(missing.isError).toBe(true);
      expect(refusalSchema.parse(missing.structuredContent).code).toBe("missing_grant");
    } finally {
      await v2Client.close();
      await v2.close();
    }
  });
});
