/**
 * The notes MCP server over Streamable HTTP on 127.0.0.1 (a port chosen at run time), with
 * sessions, so list-change notifications reach the client. Each session gets its own server
 * instance over the same recorded calls.
 */
import { randomUUID } from "node:crypto";
import { type ServerType, serve } from "@hono/node-server";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Hono } from "hono";
import type { GrantKeys } from "../../src/executor/index.ts";
import { createNotesServer, type NotesCall, type NotesServer } from "./mcp-notes.ts";

export interface NotesHttpServer {
  url: string;
  calls: NotesCall[];
  /** Registers archive_note on every session (each connected client gets list_changed). */
  addArchiveTool(): void;
  close(): Promise<void>;
}

/** Starts the server on `port` (default: one chosen now); the same port serves a restart. */
export async function startNotesHttpServer(keys: GrantKeys, port = 0): Promise<NotesHttpServer> {
  const calls: NotesCall[] = [];
  const sessions = new Map<
    string,
    { transport: WebStandardStreamableHTTPServerTransport; notes: NotesServer }
  >();
  let archive = false;
  const app = new Hono();
  app.all("/mcp", async (c) => {
    const id = c.req.header("mcp-session-id");
    const existing = id === undefined ? undefined : sessions.get(id);
    if (existing) return existing.transport.handleRequest(c.req.raw);
    if (id !== undefined)
      return c.json({ jsonrpc: "2.0", error: { code: -32001, message: "unknown session" }, id: null }, 404);
    const notes = createNotesServer({ keys, record: (call) => calls.push(call) });
    if (archive) notes.addArchiveTool();
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { transport, notes });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await notes.server.connect(transport);
    return transport.handleRequest(c.req.raw);
  });
  let server: ServerType | undefined;
  const listening = await new Promise<number>((resolve, reject) => {
    server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port }, (info) => resolve(info.port));
    server.on("error", reject);
  });
  return {
    url: `http://127.0.0.1:${listening}/mcp`,
    calls,
    addArchiveTool() {
      archive = true;
      for (const { notes } of sessions.values()) notes.addArchiveTool();
    },
    async close() {
      for (const { notes } of sessions.values()) await notes.server.close();
      await new Promise<void>((resolve) => {
        if (!server) return resolve();
        if ("closeAllConnections" in server) server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
