/**
 * A small upstream MCP server built on the SDK's v2 line (`@modelcontextprotocol/server`) and
 * served with `createMcpHandler` over Streamable HTTP on 127.0.0.1 (a port chosen at run time):
 * it speaks 2026-07-28 to a client that negotiates it (no `initialize`, the `_meta` envelope on
 * every request) and 2025-11-25 statelessly to one that does not. Its `read_note` checks Writ's
 * grant with `writ/executor`'s `grantRequired`, as the v1 notes server does.
 *
 * It records, for the tests, what reached it: each JSON-RPC method POSTed (and the
 * `MCP-Protocol-Version` header it came with), and each `read_note` call with the revision it was
 * served on and the `_meta` it carried (grant, trace context).
 *
 * Tools (audience `mcp:notes`): read_note {id} -> notes.read; label_note {id} -> notes.label,
 * which first answers `input_required` (a form elicitation asking for the label, and a
 * requestState `label:<id>`) and labels the note on the retry carrying both (each round's
 * requestState is recorded in `labelStates`); archive_note {id}, registered by
 * `addArchiveTool()`, which tells listening clients the list changed; and `watch` {hang?}
 * (no grant check), which reports progress and logs a message, then answers, or with `hang`
 * waits until its caller cancels it (recorded in `cancelled`).
 *
 * Resources: `notes://board` (subscribable; `updateBoard()` tells the clients listening for it
 * that it was updated). `resourceListens()` is the `resourceSubscriptions` of each
 * `subscriptions/listen` POSTed to it whose client has not cancelled it since.
 */
import { type ServerType, serve } from "@hono/node-server";
import {
  acceptedContent,
  type CallToolResult,
  createMcpHandler,
  inputRequired,
  McpServer,
  PROTOCOL_VERSION_META_KEY,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { type GrantKeys, grantRequired } from "../../src/executor/index.ts";
import { NOTES_AUDIENCE, NOTES_ISSUER } from "./mcp-notes.ts";

export interface V2Call {
  tool: string;
  /** The revision the request was served on ("2026-07-28"), or "legacy" without the envelope. */
  revision: string;
  /** The request's `_meta` as the handler saw it (the envelope's reserved keys lifted out). */
  meta: Record<string, unknown>;
  /** Whether the grant was verified and the tool ran. */
  granted: boolean;
}

export interface V2Upstream {
  url: string;
  /** The JSON-RPC methods POSTed to it, in order, with their MCP-Protocol-Version header. */
  methods: { method: string; protocolVersion: string | null }[];
  calls: V2Call[];
  /** The requestState each `label_note` round came back with (undefined on a first round). */
  labelStates: (string | undefined)[];
  /** How many `watch` calls saw their caller cancel them. */
  cancelled: { count: number };
  addArchiveTool(): Promise<void>;
  updateBoard(): Promise<void>;
  resourceListens(): string[][];
  close(): Promise<void>;
}

const envelopeSchema = z.object({ [PROTOCOL_VERSION_META_KEY]: z.string() });
const messageSchema = z.object({
  id: z.union([z.string(), z.number()]).optional(),
  method: z.string().optional(),
  params: z
    .object({
      requestId: z.union([z.string(), z.number()]).optional(),
      notifications: z.object({ resourceSubscriptions: z.array(z.string()).optional() }).optional(),
    })
    .optional(),
});
const bodySchema = z.union([messageSchema, z.array(messageSchema)]);
export const BOARD_URI = "notes://board";

const text = (value: Record<string, unknown>): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  structuredContent: value,
});

export async function startV2Upstream(keys: GrantKeys): Promise<V2Upstream> {
  const methods: V2Upstream["methods"] = [];
  /** The resource listens POSTed and not cancelled, by request id. */
  const listens = new Map<string | number, string[]>();
  const calls: V2Call[] = [];
  const labelStates: (string | undefined)[] = [];
  const notes = new Map([["n1", "buy milk"]]);
  let archive = false;
  const cancelled = { count: 0 };
  const verify = { issuer: NOTES_ISSUER, audience: NOTES_AUDIENCE, keys };

  /** The grant check, with the call recorded as received (and whether it was granted). */
  function guarded(tool: string, action: string, run: (id: string) => CallToolResult) {
    const checked = grantRequired({ ...verify, action: { name: action } }, async (args: { id: string }) =>
      run(args.id),
    );
    return async (args: { id: string }, ctx: ServerContext) => {
      const envelope = envelopeSchema.safeParse(ctx.mcpReq.envelope);
      const result = await checked(args, ctx);
      calls.push({
        tool,
        revision: envelope.success ? envelope.data[PROTOCOL_VERSION_META_KEY] : "legacy",
        meta: { ...ctx.mcpReq._meta },
        granted: result.isError !== true,
      });
      return result;
    };
  }

  const factory = () => {
    const server = new McpServer(
      { name: "notes-v2", version: "2.0.0" },
      {
        capabilities: {
          tools: { listChanged: true },
          resources: { listChanged: true, subscribe: true },
          logging: {},
        },
      },
    );
    server.registerResource("board", BOARD_URI, { mimeType: "text/plain" }, async () => ({
      contents: [{ uri: BOARD_URI, mimeType: "text/plain", text: "the notes board" }],
    }));
    const idSchema = z.object({ id: z.string() });
    server.registerTool(
      "read_note",
      { description: "Read a note", inputSchema: idSchema },
      guarded("read_note", "notes.read", (id) => {
        const note = notes.get(id);
        return note === undefined
          ? { isError: true, content: [{ type: "text", text: `no note ${id}` }] }
          : text({ id, text: note });
      }),
    );
    const labelSchema = z.object({ label: z.string() });
    const labelNote = grantRequired(
      { ...verify, action: { name: "notes.label" } },
      async (args: { id: string }, ctx: ServerContext) => {
        const state = ctx.mcpReq.requestState();
        labelStates.push(typeof state === "string" ? state : undefined);
        const answer = acceptedContent(ctx.mcpReq.inputResponses, "label", labelSchema);
        if (state === `label:${args.id}` && answer !== undefined)
          return text({ id: args.id, label: answer.label });
        return inputRequired({
          inputRequests: {
            label: inputRequired.elicit({
              message: `Which label for note ${args.id}?`,
              requestedSchema: {
                type: "object",
                properties: { label: { type: "string" } },
                required: ["label"],
              },
            }),
          },
          requestState: `label:${args.id}`,
        });
      },
    );
    server.registerTool(
      "label_note",
      { description: "Label a note (asks which label)", inputSchema: idSchema },
      labelNote,
    );
    server.registerTool(
      "watch",
      {
        description: "Reports progress and logs while it runs",
        inputSchema: z.object({ hang: z.boolean().optional() }),
      },
      async (args, ctx) => {
        const progressToken = ctx.mcpReq._meta?.progressToken;
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({
            method: "notifications/progress",
            params: { progressToken, progress: 1, total: 2, message: "half way" },
          });
        }
        await ctx.mcpReq.log("info", "watching", "watch");
        if (args.hang === true) {
          await new Promise<void>((resolve) => ctx.mcpReq.signal.addEventListener("abort", () => resolve()));
          cancelled.count += 1;
        }
        return text({ watched: true });
      },
    );
    if (archive) {
      server.registerTool(
        "archive_note",
        { description: "Archive a note", inputSchema: idSchema },
        guarded("archive_note", "notes.archive", (id) => text({ archived: id })),
      );
    }
    return server;
  };
  const handler = createMcpHandler(factory);

  const fetch = async (request: Request): Promise<Response> => {
    if (request.method === "POST") {
      const body = bodySchema.safeParse(
        await request
          .clone()
          .json()
          .catch(() => undefined),
      );
      const protocolVersion = request.headers.get("mcp-protocol-version");
      const posted = !body.success ? [] : Array.isArray(body.data) ? body.data : [body.data];
      for (const message of posted) {
        if (message.method !== undefined) methods.push({ method: message.method, protocolVersion });
        const uris = message.params?.notifications?.resourceSubscriptions;
        if (message.method === "subscriptions/listen" && uris !== undefined && message.id !== undefined) {
          listens.set(message.id, uris);
        }
        const cancelled = message.params?.requestId;
        if (message.method === "notifications/cancelled" && cancelled !== undefined)
          listens.delete(cancelled);
      }
    }
    return handler.fetch(request);
  };
  let server: ServerType | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    server = serve({ fetch, hostname: "127.0.0.1", port: 0 }, (info) => resolve(info.port));
    server.on("error", reject);
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    methods,
    calls,
    labelStates,
    cancelled,
    async addArchiveTool() {
      archive = true;
      await handler.notify.toolsChanged();
    },
    async updateBoard() {
      await handler.notify.resourceUpdated(BOARD_URI);
    },
    resourceListens: () => [...listens.values()],
    async close() {
      await handler.close();
      await new Promise<void>((resolve) => {
        if (!server) return resolve();
        if ("closeAllConnections" in server) server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
