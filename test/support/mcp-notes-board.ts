/**
 * A 2025-11-25 upstream (the v1 SDK's `McpServer`, Streamable HTTP with sessions, on 127.0.0.1 at
 * a port chosen at run time) with one subscribable resource, `notes://board`: it answers
 * `resources/subscribe` / `resources/unsubscribe` (recorded in `methods`), and `updateBoard()`
 * sends `notifications/resources/updated` to each session subscribed to the board.
 */
import { randomUUID } from "node:crypto";
import { type ServerType, serve } from "@hono/node-server";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Hono } from "hono";

export const BOARD_URI = "notes://board";

/** The contract governing the board resource of the server named `notes`. */
export const BOARD_CONTRACT = {
  name: "notes.board",
  version: "1",
  description: "the notes board",
  input_schema: { type: "object" },
  side_effect: "none",
  idempotency: "natural",
  backend: { kind: "mcp_resource", server: "notes", uri: BOARD_URI },
};

export interface NotesBoardServer {
  url: string;
  /** `resources/subscribe` and `resources/unsubscribe` as received, with their URI. */
  methods: { method: string; uri: string }[];
  updateBoard(): Promise<void>;
  close(): Promise<void>;
}

export async function startNotesBoardServer(): Promise<NotesBoardServer> {
  const methods: NotesBoardServer["methods"] = [];
  const sessions = new Map<
    string,
    { transport: WebStandardStreamableHTTPServerTransport; server: McpServer }
  >();
  const subscribed = new Set<McpServer>();

  function newServer(): McpServer {
    const server = new McpServer(
      { name: "notes-board", version: "1.0.0" },
      { capabilities: { resources: { subscribe: true } } },
    );
    server.registerResource("board", BOARD_URI, { mimeType: "text/plain" }, async () => ({
      contents: [{ uri: BOARD_URI, mimeType: "text/plain", text: "the notes board" }],
    }));
    server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
      methods.push({ method: request.method, uri: request.params.uri });
      if (request.params.uri === BOARD_URI) subscribed.add(server);
      return {};
    });
    server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
      methods.push({ method: request.method, uri: request.params.uri });
      if (request.params.uri === BOARD_URI) subscribed.delete(server);
      return {};
    });
    return server;
  }

  const app = new Hono();
  app.all("/mcp", async (c) => {
    const id = c.req.header("mcp-session-id");
    const existing = id === undefined ? undefined : sessions.get(id);
    if (existing) return existing.transport.handleRequest(c.req.raw);
    if (id !== undefined)
      return c.json({ jsonrpc: "2.0", error: { code: -32001, message: "unknown session" }, id: null }, 404);
    const server = newServer();
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { transport, server });
      },
    });
    await server.connect(transport);
    return transport.handleRequest(c.req.raw);
  });
  let http: ServerType | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    http = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) => resolve(info.port));
    http.on("error", reject);
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    methods,
    async updateBoard() {
      for (const server of subscribed) await server.server.sendResourceUpdated({ uri: BOARD_URI });
    },
    async close() {
      for (const { server } of sessions.values()) await server.close();
      await new Promise<void>((resolve) => {
        if (!http) return resolve();
        if ("closeAllConnections" in http) http.closeAllConnections();
        http.close(() => resolve());
      });
    },
  };
}
