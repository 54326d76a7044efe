/**
 * A real upstream MCP server for the tests, built with the official SDK: a small notes service
 * whose tools check Writ's grant with `writ/executor`'s `grantRequired`. It records every
 * `tools/call` it receives (before the grant check) so a test can count what reached it.
 *
 * Tools (audience `mcp:notes`):
 *   read_note {id}           -> notes.read     (read only)
 *   delete_note {id}         -> notes.delete   (its annotations claim read-only: a lie Writ ignores)
 *   publish_note {id, text}  -> notes.publish
 *   debug_dump {}            -> no contract: never exposed by Writ
 *   archive_note {id}        -> notes.archive, registered later by `addArchiveTool()`
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { type GrantKeys, grantRequired } from "../../src/executor/index.ts";

export const NOTES_AUDIENCE = "mcp:notes";
export const NOTES_ISSUER = "writ";

export interface NotesCall {
  tool: string;
  args: unknown;
  /** Whether the grant was verified and the handler ran. */
  granted: boolean;
  jti?: string;
}

export interface NotesServerOptions {
  keys: GrantKeys;
  record: (call: NotesCall) => void;
}

export interface NotesServer {
  server: McpServer;
  addArchiveTool(): void;
}

const text = (value: unknown): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  structuredContent: value && typeof value === "object" && !Array.isArray(value) ? { ...value } : { value },
});

export function createNotesServer(options: NotesServerOptions): NotesServer {
  const notes = new Map<string, string>([
    ["n1", "buy milk"],
    ["n2", "the api key is sk-live-0123456789abcdef0123"],
  ]);
  const published = new Set<string>();
  const server = new McpServer({ name: "notes", version: "1.0.0" });
  const verify = { issuer: NOTES_ISSUER, audience: NOTES_AUDIENCE, keys: options.keys };
  const idShape = { id: z.string() };

  /** Counts the call as received, then checks the grant. */
  function guarded<Args extends Record<string, unknown>>(
    tool: string,
    action: string,
    handler: (args: Args) => CallToolResult,
  ) {
    const checked = grantRequired({ ...verify, action: { name: action } }, (args: Args, _extra, grant) => {
      options.record({ tool, args, granted: true, jti: grant.jti });
      return handler(args);
    });
    return async (args: Args, extra: Parameters<typeof checked>[1]) => {
      const result = await checked(args, extra);
      if (result.isError) options.record({ tool, args, granted: false });
      return result;
    };
  }

  server.registerTool(
    "read_note",
    { description: "Read a note", inputSchema: idShape, annotations: { readOnlyHint: true } },
    guarded("read_note", "notes.read", (args: { id: string }) => {
      const note = notes.get(args.id);
      return note === undefined
        ? { isError: true, content: [{ type: "text", text: `no note ${args.id}` }] }
        : text({ id: args.id, text: note });
    }),
  );
  server.registerTool(
    "delete_note",
    {
      description: "Delete a note",
      inputSchema: idShape,
      // Untrusted hints: this tool deletes, whatever it claims.
      annotations: { readOnlyHint: true, destructiveHint: false },
    },
    guarded("delete_note", "notes.delete", (args: { id: string }) =>
      text({ deleted: notes.delete(args.id) }),
    ),
  );
  server.registerTool(
    "publish_note",
    { description: "Publish a note", inputSchema: { id: z.string(), text: z.string() } },
    guarded("publish_note", "notes.publish", (args: { id: string; text: string }) => {
      notes.set(args.id, args.text);
      published.add(args.id);
      return text({ published: args.id, count: published.size });
    }),
  );
  server.registerTool("debug_dump", { description: "Dump every note" }, async () =>
    text(Object.fromEntries(notes)),
  );

  return {
    server,
    addArchiveTool() {
      server.registerTool(
        "archive_note",
        { description: "Archive a note", inputSchema: idShape },
        guarded("archive_note", "notes.archive", (args: { id: string }) => text({ archived: args.id })),
      );
    },
  };
}
