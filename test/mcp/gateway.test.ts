/**
 * Writ in front of a real MCP server: the official SDK's client talks to Writ's /mcp endpoint,
 * and Writ talks to the notes server (built with the SDK, checking grants with `writ/executor`),
 * spawned over stdio and served over Streamable HTTP on loopback.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { createRemoteJWKSet } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import type { GrantKeys } from "../../src/executor/index.ts";
import { freePort, startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
import { connectMcp } from "../support/mcp-client.ts";
import type { NotesCall } from "../support/mcp-notes.ts";
import { type NotesHttpServer, startNotesHttpServer } from "../support/mcp-notes-http.ts";
import { repoRoot } from "../support/paths.ts";
import { notesPolicyDir, withNotes } from "./notes-fixture.ts";

const notesCallSchema = z.object({
  tool: z.string(),
  args: z.unknown(),
  granted: z.boolean(),
  jti: z.string().optional(),
});

const toolErrorSchema = z.object({
  error: writErrorSchema,
  decision: z.string().optional(),
  decision_id: z.string().optional(),
  approval: z.object({ id: z.string(), status: z.string() }).passthrough().optional(),
});

interface Setup {
  gw: TestGateway;
  /** What the notes server received, in order. */
  calls(): Promise<NotesCall[]>;
  http?: NotesHttpServer;
  close(): Promise<void>;
}

async function startWithStdio(): Promise<Setup> {
  const policyDir = await notesPolicyDir();
  const port = await freePort();
  const callLog = path.join(policyDir, "calls.ndjson");
  await writeFile(callLog, "");
  const gw = await startTestGateway({
    port,
    configure: withNotes(
      {
        transport: "stdio",
        command: process.execPath,
        args: ["--import", "tsx", path.join(repoRoot, "test/support/mcp-notes-stdio.ts")],
        cwd: repoRoot,
        env: { WRIT_JWKS_URL: `http://127.0.0.1:${port}/.well-known/jwks.json`, NOTES_CALL_LOG: callLog },
      },
      policyDir,
    ),
  });
  return {
    gw,
    async calls() {
      const text = await readFile(callLog, "utf8");
      return text
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => notesCallSchema.parse(JSON.parse(line)));
    },
    async close() {
      await gw.close();
      await rm(policyDir, { recursive: true, force: true });
    },
  };
}

async function startWithHttp(): Promise<Setup> {
  const policyDir = await notesPolicyDir();
  // The gateway's key set URL is known once it listens; the notes server resolves it lazily.
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  const http = await startNotesHttpServer((header, token) => {
    if (!jwks) throw new Error("the gateway is not up yet");
    return jwks(header, token);
  });
  try {
    const gw = await startTestGateway({
      configure: withNotes({ transport: "http", url: http.url }, policyDir),
    });
    jwks = createRemoteJWKSet(new URL(gw.jwksUrl));
    return {
      gw,
      http,
      calls: async () => [...http.calls],
      async close() {
        await gw.close();
        await http.close();
        await rm(policyDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await http.close();
    throw error;
  }
}

function connect(gw: TestGateway, token: string): Promise<Client> {
  return connectMcp(gw.url, token);
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  meta?: Record<string, unknown>,
) {
  const result = await client.callTool(
    { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
    CallToolResultSchema,
  );
  return CallToolResultSchema.parse(result);
}

function toolError(result: CallToolResult) {
  expect(result.isError).toBe(true);
  return toolErrorSchema.parse(result.structuredContent);
}

describe.each([
  ["stdio", startWithStdio],
  ["Streamable HTTP", startWithHttp],
])("Writ in front of an MCP server over %s", (_transport, start) => {
  let setup: Setup;
  let viewer: Client;
  let editor: Client;
  const clients: Client[] = [];

  beforeAll(async () => {
    setup = await start();
    viewer = await connect(setup.gw, await setup.gw.token("vera", { roles: ["viewer"] }));
    editor = await connect(setup.gw, await setup.gw.token("eddie", { roles: ["editor"] }));
    clients.push(viewer, editor);
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) await client.close();
    await setup?.close();
  });

  const countOf = async (tool: string) => (await setup.calls()).filter((c) => c.tool === tool).length;

  it("lists, per caller, only the contracted tools the policy lets them use", async () => {
    const seen = (await viewer.listTools()).tools.map((t) => t.name);
    const seenByEditor = (await editor.listTools()).tools.map((t) => t.name);
    expect(seen).toEqual(["read_note"]);
    // Registry order; archive_note has a contract but the server does not offer it (yet).
    expect(seenByEditor).toEqual(["delete_note", "publish_note", "read_note"]);
    // debug_dump has no contract: never exposed.
    expect(seenByEditor).not.toContain("debug_dump");
  });

  it("shows the contract's view and hints, not the upstream server's", async () => {
    const tools = (await editor.listTools()).tools;
    const del = tools.find((t) => t.name === "delete_note");
    const read = tools.find((t) => t.name === "read_note");
    // The server claims delete_note is read-only; its contract says committing.
    expect(del?.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    expect(del?.description).toBe("notes.delete on the notes server");
    expect(del?.inputSchema).toMatchObject({ required: ["id"], additionalProperties: false });
    expect(read?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    // Writ validates results itself; an advertised schema would make clients reject tool errors.
    expect(read?.outputSchema).toBeUndefined();
  });

  it("runs an allowed call on the server exactly once, with a grant the server verified", async () => {
    const before = await countOf("read_note");
    const result = await call(viewer, "read_note", { id: "n1" });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ id: "n1", text: "buy milk" });
    const meta = z
      .object({
        "writ/result": z.object({ decision_id: z.string(), provenance: z.object({ tool: z.string() }) }),
      })
      .parse(result._meta);
    expect(meta["writ/result"].provenance.tool).toBe("notes.read");

    const calls = (await setup.calls()).filter((c) => c.tool === "read_note");
    expect(calls.length).toBe(before + 1);
    const last = calls.at(-1);
    expect(last?.granted).toBe(true);
    // The grant the server verified is the one the decision log holds for this decision.
    const entry = await setup.gw.gateway.store.getDecision(meta["writ/result"].decision_id);
    expect(entry?.grant_jti).toBe(last?.jti);
    expect(entry?.decision).toBe("allow");
  });

  it("reports the upstream's state and the dispatches in /metrics", async () => {
    await call(viewer, "read_note", { id: "n1" });
    const metrics = (await setup.gw.request("GET", "/metrics")).text;
    expect(metrics).toContain('writ_mcp_upstream_up{server="notes"} 1');
    expect(metrics).toMatch(/writ_mcp_upstream_tools\{server="notes"\} [1-9]/);
    expect(metrics).toMatch(/writ_dispatches_total\{backend="mcp",result="ok"\} [1-9]/);
  });

  it("redacts secrets in what the server returns", async () => {
    const result = await call(viewer, "read_note", { id: "n2" });
    expect(result.isError).toBeFalsy();
    const text = z.object({ text: z.string() }).parse(result.structuredContent).text;
    expect(text).not.toContain("sk-live-0123456789abcdef0123");
  });

  it("passes the server's own tool error on as it sent it, with Writ's tool_error in _meta", async () => {
    const result = await call(viewer, "read_note", { id: "nope" });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: "text", text: "no note nope" }]);
    expect(result.structuredContent).toBeUndefined();
    const error = writErrorSchema.parse(result._meta?.["writ/error"]);
    expect(error.category).toBe("tool_error");
    expect(error.message).toContain("no note nope");
    expect(error.effect_committed).toBe(false);
  });

  it("never sends a denied call to the server", async () => {
    const before = await countOf("delete_note");
    const error = toolError(await call(viewer, "delete_note", { id: "n1" }));
    expect(error.error.category).toBe("policy_denied");
    expect(error.error.message).toContain("only editors change notes");
    expect(error.decision).toBe("deny");
    expect(await countOf("delete_note")).toBe(before);
  });

  it("answers malformed arguments with a tool error the model can correct", async () => {
    const before = (await setup.calls()).length;
    const error = toolError(await call(viewer, "read_note", { id: 5 }));
    expect(error.error.category).toBe("invalid_argument");
    expect(error.error.field_errors.map((f) => f.path).join(" ")).toContain("id");
    expect(error.error.suggested_fix.length).toBeGreaterThan(10);
    const extra = toolError(await call(viewer, "read_note", { id: "n1", shell: "rm -rf /" }));
    expect(extra.error.category).toBe("invalid_argument");
    expect((await setup.calls()).length).toBe(before);
  });

  it("keeps an unknown tool a protocol error", async () => {
    const failure = await call(viewer, "debug_dump", {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(McpError);
    expect(failure instanceof McpError ? failure.code : 0).toBe(-32602);
  });

  it("completes an approval-required call after a moderator approves it", async () => {
    const args = { id: "n3", text: "hello, world" };
    const pending = toolError(await call(editor, "publish_note", args));
    expect(pending.error.category).toBe("approval_required");
    const approvalId = pending.approval?.id;
    expect(approvalId).toBeDefined();
    expect(pending.error.suggested_fix).toContain("writ/approval");
    expect(await countOf("publish_note")).toBe(0);

    // Too early: still pending.
    const early = toolError(await call(editor, "publish_note", args, { "writ/approval": approvalId }));
    expect(early.error.category).toBe("approval_required");

    const moderator = await setup.gw.token("mona", { roles: ["moderator"] });
    const approved = await setup.gw.request("POST", `/v1/approvals/${approvalId}/approve`, {
      token: moderator,
      body: { reason: "fine" },
    });
    expect(approved.status).toBe(200);

    // Someone else cannot run it with the requester's approval.
    const other = await connect(setup.gw, await setup.gw.token("ed2", { roles: ["editor"] }));
    clients.push(other);
    const stolen = await call(other, "publish_note", args, { "writ/approval": approvalId });
    expect(stolen.isError).toBe(true);

    const done = await call(editor, "publish_note", args, { "writ/approval": approvalId });
    expect(done.isError).toBeFalsy();
    expect(done.structuredContent).toEqual({ published: "n3", count: 1 });
    const publishes = (await setup.calls()).filter((c) => c.tool === "publish_note");
    expect(publishes.map((c) => c.granted)).toEqual([true]);

    // The released grant is single use.
    const again = toolError(await call(editor, "publish_note", args, { "writ/approval": approvalId }));
    expect(again.error.category).toBe("policy_denied");
    expect(await countOf("publish_note")).toBe(1);
  });

  it("refuses an MCP session without a valid bearer token", async () => {
    const client = new Client({ name: "anonymous", version: "1.0.0" });
    const failure = await client
      .connect(new StreamableHTTPClientTransport(new URL(`${setup.gw.url}/mcp`)))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(failure).toBeInstanceOf(Error);
    const answer = await setup.gw.request("POST", "/mcp", {
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers: { accept: "application/json, text/event-stream" },
    });
    expect(answer.status).toBe(401);
    expect(writErrorSchema.parse(answer.json).category).toBe("unauthenticated");
  });
});

describe("upstream catalog changes and the grant check on the server side", () => {
  let setup: Setup;
  beforeAll(async () => {
    setup = await startWithHttp();
  }, 60_000);
  afterAll(async () => {
    await setup?.close();
  });

  it("lists a contracted tool once the server adds it (list_changed invalidates the cache)", async () => {
    const editor = await connect(setup.gw, await setup.gw.token("eddie", { roles: ["editor"] }));
    try {
      expect((await editor.listTools()).tools.map((t) => t.name)).not.toContain("archive_note");
      setup.http?.addArchiveTool();
      const names = await waitFor("archive_note to be listed", async () => {
        const listed = (await editor.listTools()).tools.map((t) => t.name);
        return listed.includes("archive_note") ? listed : undefined;
      });
      expect(names).toEqual(["archive_note", "delete_note", "publish_note", "read_note"]);
      const result = await call(editor, "archive_note", { id: "n1" });
      expect(result.structuredContent).toEqual({ archived: "n1" });
    } finally {
      await editor.close();
    }
  });

  it("the server's grantRequired refuses a call that did not come through Writ", async () => {
    const http = setup.http;
    if (!http) throw new Error("no HTTP notes server");
    const direct = new Client({ name: "bypass", version: "1.0.0" });
    await direct.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    try {
      const before = http.calls.filter((c) => c.granted).length;
      const missing = toolErrorSchema
        .extend({ code: z.string() })
        .parse((await call(direct, "read_note", { id: "n1" })).structuredContent);
      expect(missing.code).toBe("missing_grant");
      expect(missing.error.category).toBe("unauthenticated");
      const forged = await call(
        direct,
        "read_note",
        { id: "n1" },
        { "writ/grant": "eyJhbGciOiJub25lIn0.e30." },
      );
      expect(forged.isError).toBe(true);
      expect(http.calls.filter((c) => c.granted).length).toBe(before);
    } finally {
      await direct.close();
    }
  });
});

describe("an upstream MCP server that cannot be reached", () => {
  it("hides its tools, says why in /healthz, and the gateway still serves", async () => {
    const policyDir = await notesPolicyDir();
    const gw = await startTestGateway({
      configure: withNotes(
        { transport: "stdio", command: path.join(policyDir, "no-such-server") },
        policyDir,
      ),
    });
    try {
      const health = await gw.health();
      expect(health.mcp_servers).toEqual([
        expect.objectContaining({ name: "notes", connected: false, tools: 0, error: expect.any(String) }),
      ]);
      const editor = await connect(gw, await gw.token("eddie", { roles: ["editor"] }));
      try {
        expect((await editor.listTools()).tools).toEqual([]);
        const failure = await call(editor, "read_note", { id: "n1" }).then(
          (r) => r,
          (e: unknown) => e,
        );
        // Not listed, but contracted: the pipeline runs and the dispatch fails closed.
        expect(failure).toMatchObject({ isError: true });
        expect(toolError(CallToolResultSchema.parse(failure)).error.category).toBe("backend_unavailable");
      } finally {
        await editor.close();
      }
    } finally {
      await gw.close();
      await rm(policyDir, { recursive: true, force: true });
    }
  });
});

describe("an upstream MCP server over HTTP that restarts", () => {
  it("gets a new session: the call that meets the stale one is sent again, once", async () => {
    const policyDir = await notesPolicyDir();
    let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
    const keys: GrantKeys = (header, token) => {
      if (!jwks) throw new Error("the gateway is not up yet");
      return jwks(header, token);
    };
    let http = await startNotesHttpServer(keys);
    const port = Number(new URL(http.url).port);
    const gw = await startTestGateway({
      configure: withNotes({ transport: "http", url: http.url }, policyDir),
    });
    jwks = createRemoteJWKSet(new URL(gw.jwksUrl));
    const viewer = await connect(gw, await gw.token("vera", { roles: ["viewer"] }));
    try {
      expect((await call(viewer, "read_note", { id: "n1" })).isError).toBeFalsy();

      // Restarted before Writ noticed: its session id is unknown to the new process.
      await http.close();
      http = await startNotesHttpServer(keys, port);
      const afterRestart = await call(viewer, "read_note", { id: "n1" });
      expect(afterRestart.isError).toBeFalsy();
      expect(http.calls.filter((c) => c.granted)).toHaveLength(1);

      // Down: calls fail closed, the tools leave the list; back up: Writ reconnects by itself.
      await http.close();
      const down = toolError(await call(viewer, "read_note", { id: "n1" }));
      expect(down.error.category).toBe("backend_unavailable");
      expect((await viewer.listTools()).tools).toEqual([]);
      http = await startNotesHttpServer(keys, port);
      await waitFor(
        "the gateway to reconnect",
        async () => ((await viewer.listTools()).tools.length > 0 ? true : undefined),
        10_000,
        100,
      );
      expect((await call(viewer, "read_note", { id: "n1" })).isError).toBeFalsy();
    } finally {
      await viewer.close();
      await gw.close();
      await http.close();
      await rm(policyDir, { recursive: true, force: true });
    }
  }, 30_000);
});
